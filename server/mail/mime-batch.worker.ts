import type { OutboundMessage } from './outbound-message.js';
import { buildMime, composeSignedMime } from './mime.js';

export type BuiltMime = Awaited<ReturnType<typeof buildMime>> | { error: string };

/**
 * Builds a batch's messages one after another: built all at once, a batch's nodemailer streams
 * outlive several young-generation collections and are promoted, growing the heap by hundreds of MB.
 */
export default async function buildMimeBatch(messages: OutboundMessage[]): Promise<BuiltMime[]> {
  const built: BuiltMime[] = [];
  for (const message of messages) built.push(await buildMime(message).catch((err: Error) => ({ error: err.message })));
  return built;
}

/** One message as it leaves for the recipients' own servers (composeSignedMime), or why it could not be built. */
export function buildOutgoing(message: OutboundMessage): Promise<Uint8Array | { error: string }> {
  return composeSignedMime(message).catch((err: Error) => ({ error: err.message }));
}
