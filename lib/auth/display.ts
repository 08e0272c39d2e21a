/**
 * What the person at the terminal sees (DEV-FLOW-DISPLAY, DEV-LIM-DISPLAY-*): the address and the code exactly as the
 * server sent them — the code's case kept, the address unaltered but for the scheme, hidden only when asked (then both
 * http and https must work there, DEV-LIM-URL-UNALTERED) — a QR code of the address for a phone's camera, and the time
 * left. A QR code that does not fit the terminal is left out rather than printed broken; when the QR code pushes the
 * code off a short terminal, the code is shown again below it.
 */
import { renderUnicodeCompact } from 'uqr';
import type { DeviceCode } from './device.js';

export interface PromptOptions {
  /** Terminal width and height; undefined when not a terminal (then no QR code). */
  columns?: number | undefined;
  rows?: number | undefined;
  qr?: boolean;
  hideScheme?: boolean;
  now?: number;
}

export function displayUrl(url: string, hideScheme = false): string {
  return hideScheme ? url.replace(/^https?:\/\//, '') : url;
}

export function formatSeconds(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  return s % 60 === 0 ? `${minutes} min` : `${minutes} min ${s % 60} s`;
}

export function renderPrompt(device: DeviceCode, options: PromptOptions = {}): string[] {
  const now = options.now ?? Date.now();
  const url = displayUrl(device.verificationUrl, options.hideScheme);
  const lines = [
    'To sign in, open this address on a phone or another computer:',
    '',
    `    ${url}`,
    '',
    'and enter this code:',
    '',
    `    ${device.userCode}`,
    '',
  ];
  const target = device.verificationUrlComplete ?? device.verificationUrl;
  if (options.qr !== false && options.columns !== undefined) {
    const qr = renderUnicodeCompact(target, { border: 1 })
      .split('\n')
      .filter((line) => line !== '');
    const width = Math.max(...qr.map((line) => [...line].length));
    if (width + 4 <= options.columns) {
      lines.push(
        device.verificationUrlComplete ? 'or scan this (the code is filled in):' : 'or scan this for the address:',
        '',
        ...qr.map((line) => `    ${line}`),
        '',
      );
      if (options.rows !== undefined && lines.length + 2 > options.rows) lines.push(`Code: ${device.userCode}    Address: ${url}`, '');
    } else {
      lines.push(`(a QR code of the address needs a terminal ${width + 4} columns wide)`, '');
    }
  }
  lines.push(`The code expires in ${formatSeconds((device.expiresAt - now) / 1000)}. Waiting for approval… (Ctrl-C stops)`);
  return lines;
}
