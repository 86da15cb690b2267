import type { SMTPServerDataStream } from 'smtp-server';
import { LARGE_MESSAGE_BYTES } from './message-limits.js';

/** One message's DATA as read: its bytes count against the budget until `release`. */
export interface HeldMessage {
  /** The whole message; empty when it was over the size limit (smtp-server has answered 552) or over the budget. */
  raw: Buffer;
  /** The budget was spent while it was read: nothing of it was kept, and the sender is to be told 451. */
  overBudget: boolean;
  /** Gives its bytes back; the caller calls it once the message is stored or refused (parsing and the insert hold copies). */
  release(): void;
}

/** Messages of the largest size held at once before more are turned away. */
const MESSAGES_IN_MEMORY = 8;

/**
 * The share of the budget messages of `LARGE_MESSAGE_BYTES` or more may hold between them: the rest
 * is kept for mail of a few KB, which a flood of large messages, waiting their turn in the mail
 * worker for large ones, would otherwise turn away with `451`.
 */
const LARGE_SHARE = 3 / 4;

/**
 * Bytes of DATA an SMTP listener holds at once, across all its sessions (eight messages of the largest
 * size): whatever the connection count, messages being read and stored never hold more memory than that. A message that finds the
 * budget spent is read to its end and dropped, so the reply still lands after it.
 */
export class DataBudget {
  private held = 0;
  /** Of `held`, the bytes of messages that have reached `LARGE_MESSAGE_BYTES`. */
  private heldLarge = 0;
  private readonly limit: number;

  /** `gather` makes one message of its chunks (the inbound listener's lands in shared memory). */
  constructor(
    maxMessageBytes: number,
    private readonly gather: (chunks: Buffer[]) => Buffer = (chunks) => Buffer.concat(chunks),
  ) {
    this.limit = MESSAGES_IN_MEMORY * maxMessageBytes;
  }

  /** Bytes held now; 0 whenever no message is being read or stored. */
  heldBytes(): number {
    return this.held;
  }

  /** Reads the stream to its end; on a read error (a timeout destroying it) its bytes are given back before the error is thrown. */
  async read(stream: SMTPServerDataStream): Promise<HeldMessage> {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let large = false;
    let overBudget = false;
    const release = () => {
      this.held -= bytes;
      if (large) this.heldLarge -= bytes;
      bytes = 0;
      large = false;
      chunks.length = 0;
    };
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        // Past the size limit nothing more is kept (the message is refused); past the budget nothing at all.
        if (stream.sizeExceeded || overBudget) continue;
        const nowLarge = bytes + chunk.length >= LARGE_MESSAGE_BYTES;
        const largeAfter = this.heldLarge + chunk.length + (nowLarge && !large ? bytes : 0);
        if (this.held + chunk.length > this.limit || (nowLarge && largeAfter > this.limit * LARGE_SHARE)) {
          overBudget = true;
          release();
          continue;
        }
        chunks.push(chunk);
        bytes += chunk.length;
        this.held += chunk.length;
        if (nowLarge) {
          this.heldLarge = largeAfter;
          large = true;
        }
      }
    } catch (err) {
      release();
      throw err;
    }
    if (stream.sizeExceeded || overBudget) {
      release();
      return { raw: Buffer.alloc(0), overBudget, release };
    }
    const raw = this.gather(chunks);
    chunks.length = 0;
    return { raw, overBudget: false, release };
  }
}
