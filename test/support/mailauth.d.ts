// mailauth returns the headers each DKIM signature covers, but its declarations leave the field out.
declare module 'mailauth' {
  interface DKIMResult {
    signingHeaders: { keys: string; headers: string[]; canonicalizedHeader: string };
  }
}

export {};
