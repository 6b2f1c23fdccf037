import { expect } from 'vitest';

// `expect(res).toHaveStatus(200)`: the status of an HTTP answer (supertest's response, or
// fetch's), and on failure what came back: the request, the problem's code and detail, the
// body. A bare `expect(res).toHaveStatus(200)` says only "expected 400 to be 200".
// Registered for every test file by vitest.config.ts (setupFiles).

interface HttpAnswer {
  status: number;
  headers?: unknown;
  body?: unknown;
  text?: unknown;
  url?: string;
  req?: { method?: string; path?: string };
}

declare module 'vitest' {
  interface Matchers<T = any> {
    toHaveStatus(status: number): T;
  }
}

const MAX_BODY = 2000;

function header(res: HttpAnswer, name: string): string | undefined {
  const h = res.headers;
  if (!h || typeof h !== 'object') return undefined;
  if (typeof (h as Headers).get === 'function') return (h as Headers).get(name) ?? undefined;
  const v = (h as Record<string, unknown>)[name];
  return v === undefined ? undefined : String(v);
}

function requestLine(res: HttpAnswer): string {
  if (res.req?.method && res.req.path) return `${res.req.method} ${res.req.path}`;
  return res.url ? `GET ${res.url}` : 'the request';
}

function bodyOf(res: HttpAnswer): string {
  // fetch's Response: the body is a stream the test may not have read (nor may we).
  if (typeof res.text === 'function') return '(a fetch Response: its body is not read here)';
  let text = '';
  if (Buffer.isBuffer(res.body)) {
    text = res.body.toString('utf8');
  } else if (res.body !== undefined && res.body !== null && typeof res.body === 'object' && Object.keys(res.body).length > 0) {
    text = JSON.stringify(res.body);
  } else if (typeof res.text === 'string') {
    text = res.text;
  }
  if (!text) return '(no body)';
  return text.length > MAX_BODY ? `${text.slice(0, MAX_BODY)}… (${text.length} characters)` : text;
}

function problemOf(res: HttpAnswer): string | null {
  if (typeof res.text === 'function') return null;
  if (!/problem\+json/.test(header(res, 'content-type') ?? '')) return null;
  const p = res.body as { code?: unknown; detail?: unknown } | undefined;
  if (!p || typeof p !== 'object') return null;
  return `problem: ${String(p.code)}: ${String(p.detail)}`;
}

expect.extend({
  toHaveStatus(received: HttpAnswer, status: number) {
    if (!received || typeof received.status !== 'number') {
      return { pass: false, message: () => `expected an HTTP response with a status, got ${this.utils.printReceived(received)}` };
    }
    const pass = received.status === status;
    return {
      pass,
      message: () =>
        [
          `expected ${requestLine(received)} ${this.isNot ? 'not ' : ''}to answer ${status}, got ${received.status}`,
          problemOf(received),
          `body: ${bodyOf(received)}`,
        ]
          .filter(Boolean)
          .join('\n'),
      actual: received.status,
      expected: status,
    };
  },
});
