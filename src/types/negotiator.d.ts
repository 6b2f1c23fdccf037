// negotiator 1.x (the HTTP content negotiation of Express's `accepts` and of compression), as
// src/http/head-encoding.ts uses it: its package has no types, and @types/negotiator describes
// 0.6, whose encoding() took no options.
declare module 'negotiator' {
  import type { IncomingMessage } from 'node:http';
  export default class Negotiator {
    constructor(request: IncomingMessage);
    encoding(available?: readonly string[], options?: { preferred?: readonly string[] }): string | undefined;
  }
}
