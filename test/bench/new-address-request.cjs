// autocannon's setupRequest (a file, as its worker threads require): each POST /events/send names
// an address never seen, so every event creates its contact. `idReplacement` cannot do it: it
// swaps the id into the body after Content-Length was computed from the placeholder.
const { randomUUID } = require('node:crypto');

module.exports = (request) => ({
  ...request,
  body: JSON.stringify({
    event: 'bench.signed_up',
    email: `user-${randomUUID()}@example.com`,
    payload: { plan: 'pro' },
  }),
});
