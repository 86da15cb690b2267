export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skipped';

/** What one doctor check found. */
export interface CheckResult {
  status: CheckStatus;
  detail: string;
  /** What to do, in plain words, when the status is not ok. */
  fix?: string;
}
