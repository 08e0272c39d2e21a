// Archives of module versions: a folder becomes a deterministic tar.gz; ready archives keep their content type.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { create as createTar } from 'tar';
import type { ArchiveExtension } from './catalog.js';

/** A deterministic tar.gz of a folder: sorted entries, fixed mtime, no owner data — same bytes every time. */
export function archiveDirectory(dir: string): NodeJS.ReadableStream {
  const output = new PassThrough();
  const entries: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const found = await readdir(path.join(dir, rel), { withFileTypes: true });
    for (const entry of found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      entries.push(child);
      if (entry.isDirectory()) await walk(child);
    }
  };
  walk('')
    .then(() => {
      // tar walks folders in readdir order; listing every entry ourselves (noDirRecurse) fixes the order.
      const pack = createTar({ gzip: true, cwd: dir, portable: true, mtime: new Date(0), noDirRecurse: true }, entries.length > 0 ? entries : ['.']);
      pack.on('error', (error: unknown) => output.destroy(error as Error));
      pack.pipe(output);
    })
    .catch((error: Error) => output.destroy(error));
  return output;
}

export function contentTypeOf(extension: ArchiveExtension): string {
  switch (extension) {
    case '.zip':
      return 'application/zip';
    case '.tar':
      return 'application/x-tar';
    case '.tar.bz2':
    case '.tbz2':
      return 'application/x-bzip2';
    case '.tar.xz':
    case '.txz':
      return 'application/x-xz';
    default:
      return 'application/gzip';
  }
}
