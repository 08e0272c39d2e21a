/**
 * The parameters of the storage API's methods, Drive v2's: path parameters (`fileId`, …), the query parameters of
 * each method, the common ones (`fields`, `alt`, `quotaUser`, `prettyPrint`, `userIp`), `requestBody` for the JSON
 * body, `ifMatch` (an etag) where Drive honours it, and `signal` to abort. The runtime table in methods.ts refuses
 * any other key, so a misspelt parameter is an error, not silently ignored.
 */
import type {
  Channel,
  ChildReference,
  Comment,
  CommentReply,
  Drive,
  File,
  ModifyLabelsRequest,
  ParentReference,
  Permission,
  Property,
  Revision,
} from './types.js';

/** What every method takes. */
export interface CommonParams {
  /** A partial response: `id,title,parents(id)`; list methods always keep `nextPageToken` when paging with `.all`. */
  fields?: string;
  /** Only `json` here: content is downloaded by lib/storage/download.ts (`alt=media`). */
  alt?: 'json';
  /** Quota is counted per this string instead of per user. */
  quotaUser?: string;
  prettyPrint?: boolean;
  userIp?: string;
  /** Aborts the request (and the retries' waits). */
  signal?: AbortSignal;
}

/** A 64-bit number: a whole number, or its decimal string. */
export type Int64 = number | string;

export interface AllDrives {
  /** Whether the caller knows about shared drives (needed for files in them). */
  supportsAllDrives?: boolean;
  /** Deprecated: supportsAllDrives. */
  supportsTeamDrives?: boolean;
}

export interface ViewParams {
  /** Comma-separated label ids to include in `labelInfo`. */
  includeLabels?: string;
  /** `published`: include the permissions of that view. */
  includePermissionsForView?: string;
}

/** An etag: the change is made only if the resource still has it (else 412 conditionNotMet). */
export interface IfMatch {
  ifMatch?: string;
}

export interface PageParams {
  maxResults?: number;
  pageToken?: string;
}

interface FileId {
  fileId: string;
}

type P<T> = CommonParams & T;

export type AboutGetParams = P<{ includeSubscribed?: boolean; maxChangeIdCount?: Int64; startChangeId?: Int64 }>;

export type AppsGetParams = P<{ appId: string }>;
export type AppsListParams = P<{ appFilterExtensions?: string; appFilterMimeTypes?: string; languageCode?: string }>;

interface DriveScope extends AllDrives {
  driveId?: string;
  /** Deprecated: driveId. */
  teamDriveId?: string;
}
export type ChangesGetParams = P<DriveScope & { changeId: string }>;
export type ChangesGetStartPageTokenParams = P<DriveScope>;
export type ChangesListParams = P<
  DriveScope &
    ViewParams &
    PageParams & {
      includeCorpusRemovals?: boolean;
      includeDeleted?: boolean;
      includeItemsFromAllDrives?: boolean;
      includeSubscribed?: boolean;
      includeTeamDriveItems?: boolean;
      spaces?: string;
      startChangeId?: Int64;
    }
>;
export type ChangesWatchParams = ChangesListParams & { requestBody: Channel };
export type ChannelsStopParams = P<{ requestBody: Channel }>;

interface FolderChild {
  folderId: string;
  childId: string;
}
export type ChildrenDeleteParams = P<FolderChild & { enforceSingleParent?: boolean }>;
export type ChildrenGetParams = P<FolderChild>;
export type ChildrenInsertParams = P<AllDrives & { folderId: string; enforceSingleParent?: boolean; requestBody: ChildReference }>;
export type ChildrenListParams = P<PageParams & { folderId: string; orderBy?: string; q?: string }>;

interface CommentRef extends FileId {
  commentId: string;
}
export type CommentsDeleteParams = P<CommentRef>;
export type CommentsGetParams = P<CommentRef & { includeDeleted?: boolean }>;
export type CommentsInsertParams = P<FileId & { requestBody: Comment }>;
export type CommentsListParams = P<FileId & PageParams & { includeDeleted?: boolean; updatedMin?: string }>;
export type CommentsUpdateParams = P<CommentRef & { requestBody: Comment }>;

interface DriveRef {
  driveId: string;
}
export type DrivesDeleteParams = P<DriveRef & { allowItemDeletion?: boolean; useDomainAdminAccess?: boolean }>;
export type DrivesGetParams = P<DriveRef & { useDomainAdminAccess?: boolean }>;
export type DrivesHideParams = P<DriveRef>;
/** `requestId` makes the insert idempotent: the same id gives the same drive. */
export type DrivesInsertParams = P<{ requestId: string; requestBody: Drive }>;
export type DrivesListParams = P<PageParams & { q?: string; useDomainAdminAccess?: boolean }>;
export type DrivesUpdateParams = P<DriveRef & { useDomainAdminAccess?: boolean; requestBody: Drive }>;

interface Conversion {
  convert?: boolean;
  ocr?: boolean;
  ocrLanguage?: string;
  pinned?: boolean;
  timedTextLanguage?: string;
  timedTextTrackName?: string;
}
interface FileView extends AllDrives, ViewParams {}
export type FilesCopyParams = P<FileId & FileView & Conversion & { enforceSingleParent?: boolean; visibility?: string; requestBody?: File }>;
export type FilesDeleteParams = P<FileId & AllDrives & IfMatch & { enforceSingleParent?: boolean }>;
export type FilesEmptyTrashParams = P<{ driveId?: string; enforceSingleParent?: boolean }>;
export type FilesExportParams = P<FileId & { mimeType: string }>;
export type FilesGenerateCseTokenParams = P<{ fileId?: string; parent?: string }>;
export type FilesGenerateIdsParams = P<{ maxResults?: number; space?: string; type?: string }>;
interface FileRead extends FileId, FileView {
  acknowledgeAbuse?: boolean;
  projection?: 'BASIC' | 'FULL';
  revisionId?: string;
  updateViewedDate?: boolean;
}
export type FilesGetParams = P<FileRead>;
/** Metadata only: uploads with content are lib/storage/upload/. */
export type FilesInsertParams = P<
  FileView & Conversion & { enforceSingleParent?: boolean; useContentAsIndexableText?: boolean; visibility?: string; requestBody?: File }
>;
export type FilesListParams = P<
  FileView &
    PageParams & {
      corpora?: string;
      corpus?: string;
      driveId?: string;
      includeItemsFromAllDrives?: boolean;
      includeTeamDriveItems?: boolean;
      orderBy?: string;
      projection?: 'BASIC' | 'FULL';
      q?: string;
      spaces?: string;
      teamDriveId?: string;
    }
>;
export type FilesListLabelsParams = P<FileId & PageParams>;
export type FilesModifyLabelsParams = P<FileId & { requestBody: ModifyLabelsRequest }>;
/** files.patch and files.update (metadata; content updates are lib/storage/upload/). */
export type FilesUpdateParams = P<
  FileId &
    FileView &
    Conversion &
    IfMatch & {
      addParents?: string;
      removeParents?: string;
      enforceSingleParent?: boolean;
      modifiedDateBehavior?: string;
      newRevision?: boolean;
      setModifiedDate?: boolean;
      updateViewedDate?: boolean;
      useContentAsIndexableText?: boolean;
      requestBody?: File;
    }
>;
/** files.touch, files.trash, files.untrash */
export type FilesStateParams = P<FileId & FileView & IfMatch>;
export type FilesWatchParams = P<FileRead & { requestBody: Channel }>;

interface ParentRef extends FileId {
  parentId: string;
}
export type ParentsDeleteParams = P<ParentRef & { enforceSingleParent?: boolean }>;
export type ParentsGetParams = P<ParentRef>;
export type ParentsInsertParams = P<FileId & AllDrives & { enforceSingleParent?: boolean; requestBody: ParentReference }>;
export type ParentsListParams = P<FileId>;

interface PermissionRef extends FileId, AllDrives {
  permissionId: string;
  useDomainAdminAccess?: boolean;
}
export type PermissionsDeleteParams = P<PermissionRef & { enforceExpansiveAccess?: boolean }>;
export type PermissionsGetParams = P<PermissionRef>;
export type PermissionsGetIdForEmailParams = P<{ email: string }>;
export type PermissionsInsertParams = P<
  FileId &
    AllDrives & {
      emailMessage?: string;
      enforceExpansiveAccess?: boolean;
      enforceSingleParent?: boolean;
      moveToNewOwnersRoot?: boolean;
      sendNotificationEmails?: boolean;
      useDomainAdminAccess?: boolean;
      requestBody: Permission;
    }
>;
export type PermissionsListParams = P<FileId & AllDrives & PageParams & { includePermissionsForView?: string; useDomainAdminAccess?: boolean }>;
export type PermissionsUpdateParams = P<
  PermissionRef & { enforceExpansiveAccess?: boolean; removeExpiration?: boolean; transferOwnership?: boolean; requestBody: Permission }
>;

interface PropertyRef extends FileId {
  propertyKey: string;
  /** `PRIVATE` (the default) or `PUBLIC`: which property of that key. */
  visibility?: string;
}
export type PropertiesGetParams = P<PropertyRef>;
export type PropertiesInsertParams = P<FileId & { requestBody: Property }>;
export type PropertiesListParams = P<FileId>;
export type PropertiesUpdateParams = P<PropertyRef & { requestBody: Property }>;

interface ReplyRef extends CommentRef {
  replyId: string;
}
export type RepliesDeleteParams = P<ReplyRef>;
export type RepliesGetParams = P<ReplyRef & { includeDeleted?: boolean }>;
export type RepliesInsertParams = P<CommentRef & { requestBody: CommentReply }>;
export type RepliesListParams = P<CommentRef & PageParams & { includeDeleted?: boolean }>;
export type RepliesUpdateParams = P<ReplyRef & { requestBody: CommentReply }>;

interface RevisionRef extends FileId {
  revisionId: string;
}
export type RevisionsGetParams = P<RevisionRef>;
export type RevisionsListParams = P<FileId & PageParams>;
export type RevisionsUpdateParams = P<RevisionRef & { requestBody: Revision }>;
