/** POSTLANE_SECRET_KEY for every test process: fixed, so sealed values in one test stay readable by its children. */
export const TEST_SECRET_KEY = Buffer.alloc(32, 7).toString('base64');
