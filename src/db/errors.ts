// PostgreSQL errors the HTTP and web error handlers translate, recognised by SQLSTATE code,
// never by message text.

// SQLSTATEs that say a value of the request is unusable, decided by code, never by message:
// class 22 (data exception: 22021 a byte sequence invalid in UTF-8, NUL included; 22P02 an
// invalid text representation; 22001 a string too long; 22003 a number out of range; 22007
// and 22008 a bad date or time, ...) and 54000 (a value over a limit, e.g. an index row).
export function isInvalidInputError(err: unknown): err is { code: string } {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22[0-9A-Z]{3}|54000)$/.test(code);
}
