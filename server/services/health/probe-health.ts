/** What answered GET /health at an address: Postlane (told by its body's shape), something else, or nothing. */
export interface HealthProbe {
  health: 'postlane' | 'other' | 'none';
  /** Postlane's own `ok`; null when it is not Postlane answering. */
  health_ok: boolean | null;
  /** The HTTP status, or the reason nothing answered. */
  answer: string;
}

/** Whether the body is Postlane's /health (its `database` and `jobs.backlog`), not something else on the port. */
function isPostlaneHealth(body: unknown): body is { ok: boolean } {
  const b = body as { ok?: unknown; database?: { ok?: unknown }; jobs?: { backlog?: unknown } } | null;
  return typeof b?.ok === 'boolean' && typeof b.database?.ok === 'boolean' && Array.isArray(b.jobs?.backlog);
}

/**
 * GET {url}/health within `timeoutMs`, redirects not followed (a proxy's redirect is not Postlane).
 * Used by `status`, `service status` and `doctor`, which must not mistake another server on the port for Postlane.
 */
export async function probeHealth(url: string, timeoutMs = 2_000): Promise<HealthProbe> {
  try {
    const response = await fetch(`${url.replace(/\/+$/, '')}/health`, {
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    const body: unknown = await response.json().catch(() => null);
    const answer = `HTTP ${response.status}`;
    return isPostlaneHealth(body)
      ? { health: 'postlane', health_ok: body.ok, answer }
      : { health: 'other', health_ok: null, answer };
  } catch (err) {
    // fetch hides the useful part (ECONNREFUSED) in `cause`.
    const reason = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    return { health: 'none', health_ok: null, answer: reason };
  }
}
