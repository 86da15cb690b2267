// NO_COLOR (https://no-color.org): chalk, under Ink, reads FORCE_COLOR when it is first imported, which is later than this.
if (process.env.NO_COLOR) process.env.FORCE_COLOR = '0';

const { createProgram } = await import('./program.js');

await createProgram().parseAsync(process.argv);
