/**
 * What a located source is: where its bytes are (an http(s) or file URL, an S3 object, a git repository), how they
 * are packed and checked, and which sub-directory of the fetched tree is wanted. The sources area fetches these; the
 * registry finds them (lib/registry/location.ts reads them from `X-Registry-Get` and writes them to the lock file).
 */

export type ArchiveType = 'tar' | 'tar.gz' | 'tar.bz2' | 'tar.xz' | 'zip';
export type ChecksumAlgorithm = 'md5' | 'sha1' | 'sha256' | 'sha512';

export interface Checksum {
  algorithm: ChecksumAlgorithm;
  /** Lower-case hex. */
  hex: string;
}

interface CommonLocation {
  /** Sub-directory inside the fetched tree ('' for its root); may start with `*` meaning the single top folder. */
  subdir: string;
}

export interface HttpLocation extends CommonLocation {
  getter: 'http';
  url: string;
  /** Archive type from `?archive=` or the extension; 'none' for `archive=false`; undefined means sniff the bytes. */
  archive: ArchiveType | 'none' | undefined;
  checksum: Checksum | undefined;
}

export interface S3Location extends CommonLocation {
  getter: 's3';
  bucket: string;
  key: string;
  region: string | undefined;
  /** Custom endpoint for S3-compatible stores (path-style addressing); undefined for AWS. */
  endpoint: string | undefined;
  versionId: string | undefined;
  archive: ArchiveType | 'none' | undefined;
  checksum: Checksum | undefined;
}

export interface GitLocation extends CommonLocation {
  getter: 'git';
  /** The repository URL as git takes it (https, ssh, scp-like, or file for trusted local use). */
  url: string;
  ref: string | undefined;
  depth: number | undefined;
}

export type SourceLocation = HttpLocation | S3Location | GitLocation;
