import type { OutboundMessage } from './outbound-message.js';
import { buildMime } from './mime.js';

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
