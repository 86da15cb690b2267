import type { MikroORM } from '@mikro-orm/postgresql';

interface Waiting<Request, Result> {
  request: Request;
  resolve: (result: Result) => void;
  reject: (err: unknown) => void;
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
      const batch = this.waiting.splice(0, this.maxBatch);
      this.inFlight += 1;
      this.run(batch.map((w) => w.request))
        .then(
          (results) => batch.forEach((w, at) => w.resolve(results[at]!)),
          (err: unknown) => batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.drain();
        });
    }
  }
}
