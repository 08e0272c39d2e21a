// One value as one shell word, for the `export NAME=value …` lines the dev servers print to be pasted into a shell.

/** A value as one shell word: bare when it holds only safe characters, else single-quoted. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** `export A=… B=…`: the variables as one line a POSIX shell takes as it is. */
export function exportLine(env: Record<string, string>): string {
  return `export ${Object.entries(env)
    .map(([k, v]) => `${k}=${shellQuote(v)}`)
    .join(' ')}`;
}
