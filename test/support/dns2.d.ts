// dns2 ships no declarations (and @types/dns2 is not installed): the part dns-server.ts uses.
declare module 'dns2' {
  import type { EventEmitter } from 'node:events';
  import type { AddressInfo } from 'node:net';

  namespace dns2 {
    interface Question {
      name: string;
      type: number;
      class: number;
    }
    interface Resource {
      name: string;
      type: number;
      class: number;
      ttl: number;
      [field: string]: unknown;
    }
    interface Packet {
      header: { rcode: number };
      questions: Question[];
      answers: Resource[];
    }
    type Send = (response: Packet) => Promise<unknown>;
    interface ServerOptions {
      udp?: boolean | { type: 'udp4' | 'udp6' };
      tcp?: boolean;
      handle?: (request: Packet, send: Send, client: unknown) => void;
    }
    interface ListenOptions {
      udp?: { port: number; address?: string; type?: 'udp4' | 'udp6' };
      tcp?: { port: number; address?: string };
    }
    interface Addresses {
      udp?: AddressInfo;
      tcp?: AddressInfo;
    }
    interface Server extends EventEmitter {
      listen(options?: ListenOptions): Promise<Addresses>;
      close(): Promise<void>;
    }
  }

  const dns2: {
    Packet: {
      TYPE: Record<'A' | 'NS' | 'CNAME' | 'SOA' | 'PTR' | 'MX' | 'TXT' | 'AAAA' | 'SRV' | 'ANY', number>;
      CLASS: Record<'IN' | 'ANY', number>;
      createResponseFromRequest(request: dns2.Packet): dns2.Packet;
    };
    createServer(options: dns2.ServerOptions): dns2.Server;
  };
  export = dns2;
}
