/** Polls until the condition holds; throws after `timeoutMs`. */
export async function until(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Polls until `get` answers a value (not undefined) and returns it; throws `never` after `timeoutMs`. */
export async function untilFound<T>(
  get: () => Promise<T | undefined> | T | undefined,
  never = 'the value never came',
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(never);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
