// The one way pages are written: `html` escapes every interpolated value unless it is
// itself the output of `html` (a SafeHtml), so nothing reaches a page unescaped by accident.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type Interpolation = SafeHtml | string | number | false | null | undefined | readonly Interpolation[];

function render(v: Interpolation): string {
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v === null || v === undefined || v === false) return '';
  return escapeHtml(v as string | number);
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

// An address safe to put in href/src: http(s) only, so a feed cannot smuggle in a
// `javascript:` link. Anything else is null and the caller leaves the link out.
export function httpUrl(value: string | null | undefined, opts: { httpsOnly?: boolean } = {}): string | null {
  if (!value) return null;
  try {
    const u = new URL(value);
    if (u.protocol === 'https:' || (!opts.httpsOnly && u.protocol === 'http:')) return u.href;
  } catch {
    // not an absolute URL
  }
  return null;
}
