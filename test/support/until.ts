/**
 * Polls until the condition holds; throws `never` after `timeoutMs`. `never` may be a function, for a
 * message that says what the state was then (a process's output, the rows left).
 */
export async function until(
  condition: () => Promise<boolean> | boolean,
  timeoutMs = 20_000,
  never: string | (() => string | Promise<string>) = 'condition never held',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(typeof never === 'string' ? never : await never());
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Polls until `get` answers a value (not undefined) and returns it; throws `never` after `timeoutMs`. */
export async function untilFound<T>(
  get: () => Promise<T | undefined> | T | undefined,
  never: string | (() => string | Promise<string>) = 'the value never came',
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(typeof never === 'string' ? never : await never());
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
