/** The media types the storage service gives its own kinds of file (Drive v2's). */

/** A folder. */
export const FOLDER_MIME = 'application/vnd.google-apps.folder';

/** Whether `mimeType` is one of the service's own documents (folders too): they have no content of their own to download, only exports. */
export function isServiceDocument(mimeType: string | undefined): boolean {
  return mimeType?.startsWith('application/vnd.google-apps.') ?? false;
}
