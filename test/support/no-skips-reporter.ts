import type { Reporter, TestModule, Vitest } from 'vitest/node';

/**
 * A skipped or todo test fails the run: a test that cannot run here (a missing tool, the wrong
 * clock) must say so, not pass green by being left out. Tests left out by a name filter (`-t`) are
 * the developer's choice and do not count.
 */
export default class NoSkipsReporter implements Reporter {
  private namePattern: RegExp | undefined;

  onInit(vitest: Vitest) {
    this.namePattern = vitest.config.testNamePattern;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    const skipped = testModules.flatMap((module) =>
      [...module.children.allTests()]
        .filter(
          (test) => test.result().state === 'skipped' && (!this.namePattern || this.namePattern.test(test.fullName)),
        )
        .map((test) => `${module.moduleId.replace(`${process.cwd()}/`, '')} > ${test.fullName}`),
    );
    if (skipped.length === 0) return;
    process.stderr.write(
      `\n${skipped.length} test(s) skipped or todo, which fails the run (no skip, no todo):\n${skipped.map((name) => `  - ${name}`).join('\n')}\n`,
    );
    process.exitCode = 1;
  }
}
