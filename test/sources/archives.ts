/**
 * Builders for test archives, including hostile ones no well-behaved tool would write. The tar writer emits raw
 * ustar headers so a test can put any name, type, mode or link target in an entry.
 */
import { execFileSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import yazl from 'yazl';

export interface TarMember {
  name: string;
  /** '0' file, '1' hard link, '2' symlink, '3' char device, '4' block device, '5' directory, '6' FIFO. */
  type?: '0' | '1' | '2' | '3' | '4' | '5' | '6';
  mode?: number;
  content?: Buffer | string;
  linkname?: string;
}

function field(buffer: Buffer, offset: number, length: number, value: string): void {
  buffer.write(value.slice(0, length), offset, length, 'utf8');
}

function octal(value: number, length: number): string {
  return `${value.toString(8).padStart(length - 1, '0')}\0`;
}

function header(member: TarMember, size: number): Buffer {
  const block = Buffer.alloc(512);
  field(block, 0, 100, member.name);
  field(block, 100, 8, octal(member.mode ?? (member.type === '5' ? 0o755 : 0o644), 8));
  field(block, 108, 8, octal(0, 8));
  field(block, 116, 8, octal(0, 8));
  field(block, 124, 12, octal(size, 12));
  field(block, 136, 12, octal(1_700_000_000, 12));
  field(block, 148, 8, '        ');
  field(block, 156, 1, member.type ?? '0');
  field(block, 157, 100, member.linkname ?? '');
  field(block, 257, 6, 'ustar\0');
  field(block, 263, 2, '00');
  let sum = 0;
  for (const byte of block) sum += byte;
  field(block, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return block;
}

/** A plain tar of the members, as raw bytes. */
export function tar(members: TarMember[]): Buffer {
  const blocks: Buffer[] = [];
  for (const member of members) {
    const content = member.content === undefined ? Buffer.alloc(0) : Buffer.from(member.content);
    const type = member.type ?? '0';
    const size = type === '0' ? content.length : 0;
    blocks.push(header(member, size));
    if (size > 0) {
      blocks.push(content);
      const pad = (512 - (size % 512)) % 512;
      if (pad) blocks.push(Buffer.alloc(pad));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

export const tarGz = (members: TarMember[]): Buffer => gzipSync(tar(members));
export const tarBz2 = (members: TarMember[]): Buffer => execFileSync('bzip2', ['-c'], { input: tar(members) });
export const tarXz = (members: TarMember[]): Buffer => execFileSync('xz', ['-c'], { input: tar(members) });

export interface ZipMember {
  name: string;
  content?: Buffer | string;
  /** Full unix mode including the type bits, e.g. 0o100755 or 0o120777 for a link. */
  mode?: number;
  directory?: boolean;
}

/** A zip of the members (made with yazl, unix modes kept). */
export function zip(members: ZipMember[]): Promise<Buffer> {
  const archive = new yazl.ZipFile();
  for (const member of members) {
    if (member.directory) archive.addEmptyDirectory(member.name, { mode: member.mode ?? 0o40755, mtime: new Date(1_700_000_000_000) });
    else archive.addBuffer(Buffer.from(member.content ?? ''), member.name, { mode: member.mode ?? 0o100644, mtime: new Date(1_700_000_000_000) });
  }
  archive.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    archive.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    archive.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    archive.outputStream.on('error', reject);
  });
}

/**
 * A zip whose entry names no zip writer would produce: built with same-length placeholder names, which are then
 * replaced byte for byte in both the local headers and the central directory (CRCs cover data only).
 */
export async function zipWithRawNames(members: Array<ZipMember & { rawName: string }>): Promise<Buffer> {
  const placeholders = members.map((member, i) => {
    const base = `p${i}`;
    return base + 'x'.repeat(Math.max(0, Buffer.byteLength(member.rawName) - base.length));
  });
  let buffer = await zip(members.map((member, i) => ({ ...member, name: placeholders[i] as string })));
  members.forEach((member, i) => {
    const from = Buffer.from(placeholders[i] as string);
    const to = Buffer.from(member.rawName);
    let at = buffer.indexOf(from);
    while (at !== -1) {
      to.copy(buffer, at);
      at = buffer.indexOf(from, at + to.length);
    }
  });
  buffer = Buffer.from(buffer);
  return buffer;
}
