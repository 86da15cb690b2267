import type { MikroORM } from '@mikro-orm/postgresql';

interface Waiting<Request, Result> {
  request: Request;
  resolve: (result: Result) => void;
  reject: (err: unknown) => void;
}

/** How a shared statement's requests are bounded beyond their count, and what a failed one means. */
export interface SharedQueryLimits<Request> {
  /** A batch's requests weigh at most `maxWeight` together (one heavier request goes alone). */
  weight?: { of: (request: Request) => number; max: number };
  /**
   * A statement that failed on a row's own data (SQLSTATE classes 22 and 23) is run again request
   * by request, so only a request that fails alone fails; any other error is every request's.
   */
  rowErrorsAlone?: boolean;
}

/**
 * A lookup many concurrent requests need, made for many at once: a statement starts at once while
 * fewer than `maxInFlight` run, and the requests that arrive meanwhile share the next one (as the
 * email writer shares its insert). Inside a transaction a request is looked up there and then, so
 * it sees what that transaction holds. `run` answers its requests in order.
 */
export class SharedQuery<Request, Result> {
  private readonly waiting: Waiting<Request, Result>[] = [];
  private inFlight = 0;

  constructor(
    private readonly orm: MikroORM,
    private readonly run: (requests: Request[]) => Promise<Result[]>,
    private readonly maxInFlight = 4,
    private readonly maxBatch = 200,
    private readonly limits: SharedQueryLimits<Request> = {},
  ) {}

  async load(request: Request): Promise<Result> {
    if (this.orm.em.isInTransaction()) return (await this.run([request]))[0]!;
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.drain();
    });
  }

  private drain(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.batchSize());
      this.inFlight += 1;
      this.run(batch.map((w) => w.request))
        .then(
          (results) => batch.forEach((w, at) => w.resolve(results[at]!)),
          (err: unknown) =>
            this.limits.rowErrorsAlone && batch.length > 1 && /^2[23]/.test((err as { code?: string }).code ?? '')
              ? this.oneByOne(batch)
              : batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.drain();
        });
    }
  }

  /** How many waiting requests the next statement takes: at least one, within the count and the weight. */
  private batchSize(): number {
    const weight = this.limits.weight;
    if (!weight) return this.maxBatch;
    let total = weight.of(this.waiting[0]!.request);
    let count = 1;
    while (count < Math.min(this.waiting.length, this.maxBatch)) {
      const next = weight.of(this.waiting[count]!.request);
      if (total + next > weight.max) break;
      total += next;
      count += 1;
    }
    return count;
  }

  private async oneByOne(batch: Waiting<Request, Result>[]): Promise<void> {
    for (const w of batch) await this.run([w.request]).then((results) => w.resolve(results[0]!), w.reject);
  }
}
