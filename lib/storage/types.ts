/**
 * The storage API's resources: Drive API v2's, with `drive#` kinds renamed `storage#` (`api#channel` stays). Every
 * field is optional, as in Drive: a `fields` mask leaves out whatever it does not name. 64-bit numbers (sizes,
 * versions, change ids, expirations) are strings, as Drive sends them.
 */

/** `storage#user` */
export interface User {
  kind?: 'storage#user';
  displayName?: string;
  emailAddress?: string;
  isAuthenticatedUser?: boolean;
  permissionId?: string;
  picture?: { url?: string };
}

/** `storage#parentReference`: a folder a file is in. */
export interface ParentReference {
  kind?: 'storage#parentReference';
  id?: string;
  isRoot?: boolean;
  parentLink?: string;
  selfLink?: string;
}

/** `storage#childReference`: a file in a folder. */
export interface ChildReference {
  kind?: 'storage#childReference';
  id?: string;
  childLink?: string;
  selfLink?: string;
}

/** `storage#property`: a key-value pair on a file, `PRIVATE` to the app (the default) or `PUBLIC`. */
export interface Property {
  kind?: 'storage#property';
  key?: string;
  value?: string;
  visibility?: 'PRIVATE' | 'PUBLIC' | (string & {});
  etag?: string;
  selfLink?: string;
}

/** `storage#permission`: who may do what with a file. */
export interface Permission {
  kind?: 'storage#permission';
  id?: string;
  etag?: string;
  selfLink?: string;
  name?: string;
  emailAddress?: string;
  domain?: string;
  /** On insert: the e-mail address or domain the permission is for. */
  value?: string;
  role?: 'owner' | 'organizer' | 'fileOrganizer' | 'writer' | 'reader' | (string & {});
  additionalRoles?: string[];
  type?: 'user' | 'group' | 'domain' | 'anyone' | (string & {});
  authKey?: string;
  withLink?: boolean;
  photoLink?: string;
  expirationDate?: string;
  deleted?: boolean;
  pendingOwner?: boolean;
  view?: string;
  inheritedPermissionsDisabled?: boolean;
  permissionDetails?: Array<{ permissionType?: string; role?: string; additionalRoles?: string[]; inheritedFrom?: string; inherited?: boolean }>;
}

/** `storage#permissionId` (permissions.getIdForEmail) */
export interface PermissionId {
  kind?: 'storage#permissionId';
  id?: string;
}

export interface ContentRestriction {
  readOnly?: boolean;
  reason?: string;
  type?: string;
  restrictingUser?: User;
  restrictionDate?: string;
  ownerRestricted?: boolean;
  systemRestricted?: boolean;
}

/** `storage#label`: a label applied to a file, with its field values. */
export interface Label {
  kind?: 'storage#label';
  id?: string;
  revisionId?: string;
  fields?: Record<string, LabelField>;
}

export interface LabelField {
  kind?: 'storage#labelField';
  id?: string;
  valueType?: 'dateString' | 'integer' | 'selection' | 'text' | 'user' | (string & {});
  dateString?: string[];
  integer?: string[];
  selection?: string[];
  text?: string[];
  user?: User[];
}

export interface LabelFieldModification {
  kind?: 'storage#labelFieldModification';
  fieldId?: string;
  setDateValues?: string[];
  setIntegerValues?: string[];
  setSelectionValues?: string[];
  setTextValues?: string[];
  setUserValues?: string[];
  unsetValues?: boolean;
}

export interface LabelModification {
  kind?: 'storage#labelModification';
  labelId?: string;
  removeLabel?: boolean;
  fieldModifications?: LabelFieldModification[];
}

/** The body of files.modifyLabels. */
export interface ModifyLabelsRequest {
  kind?: 'storage#modifyLabelsRequest';
  labelModifications?: LabelModification[];
}

export interface ModifyLabelsResponse {
  kind?: 'storage#modifyLabelsResponse';
  modifiedLabels?: Label[];
}

/** `storage#file`: a file or folder (mimeType `application/vnd.google-apps.folder`). */
export interface File {
  kind?: 'storage#file';
  id?: string;
  etag?: string;
  selfLink?: string;
  title?: string;
  mimeType?: string;
  description?: string;
  labels?: { starred?: boolean; hidden?: boolean; trashed?: boolean; restricted?: boolean; viewed?: boolean; modified?: boolean };
  parents?: ParentReference[];
  /** Bytes, as a string (an int64). */
  fileSize?: string;
  quotaBytesUsed?: string;
  md5Checksum?: string;
  sha1Checksum?: string;
  sha256Checksum?: string;
  createdDate?: string;
  modifiedDate?: string;
  modifiedByMeDate?: string;
  lastViewedByMeDate?: string;
  markedViewedByMeDate?: string;
  sharedWithMeDate?: string;
  trashedDate?: string;
  /** Grows with every change to the file. */
  version?: string;
  headRevisionId?: string;
  downloadUrl?: string;
  webContentLink?: string;
  webViewLink?: string;
  alternateLink?: string;
  embedLink?: string;
  iconLink?: string;
  thumbnailLink?: string;
  defaultOpenWithLink?: string;
  exportLinks?: Record<string, string>;
  openWithLinks?: Record<string, string>;
  properties?: Property[];
  permissions?: Permission[];
  permissionIds?: string[];
  userPermission?: Permission;
  explicitlyTrashed?: boolean;
  trashingUser?: User;
  owners?: User[];
  ownerNames?: string[];
  ownedByMe?: boolean;
  lastModifyingUser?: User;
  lastModifyingUserName?: string;
  sharingUser?: User;
  originalFilename?: string;
  fileExtension?: string;
  fullFileExtension?: string;
  editable?: boolean;
  copyable?: boolean;
  shared?: boolean;
  shareable?: boolean;
  writersCanShare?: boolean;
  copyRequiresWriterPermission?: boolean;
  appDataContents?: boolean;
  spaces?: string[];
  driveId?: string;
  teamDriveId?: string;
  folderColorRgb?: string;
  resourceKey?: string;
  hasThumbnail?: boolean;
  thumbnailVersion?: string;
  thumbnail?: { image?: string; mimeType?: string };
  indexableText?: { text?: string };
  contentRestrictions?: ContentRestriction[];
  shortcutDetails?: { targetId?: string; targetMimeType?: string; targetResourceKey?: string };
  labelInfo?: { labels?: Label[] };
  capabilities?: Record<string, boolean>;
  imageMediaMetadata?: Record<string, unknown>;
  videoMediaMetadata?: { durationMillis?: string; height?: number; width?: number };
  inheritedPermissionsDisabled?: boolean;
}

/** `storage#comment` */
export interface Comment {
  kind?: 'storage#comment';
  commentId?: string;
  fileId?: string;
  fileTitle?: string;
  selfLink?: string;
  content?: string;
  htmlContent?: string;
  anchor?: string;
  context?: { type?: string; value?: string };
  author?: User;
  createdDate?: string;
  modifiedDate?: string;
  deleted?: boolean;
  status?: 'open' | 'resolved' | (string & {});
  replies?: CommentReply[];
}

/** `storage#commentReply`; a reply with verb `resolve` or `reopen` changes its comment's status. */
export interface CommentReply {
  kind?: 'storage#commentReply';
  replyId?: string;
  content?: string;
  htmlContent?: string;
  author?: User;
  createdDate?: string;
  modifiedDate?: string;
  deleted?: boolean;
  verb?: 'resolve' | 'reopen' | (string & {});
}

/** `storage#revision`: one version of a file's content. */
export interface Revision {
  kind?: 'storage#revision';
  id?: string;
  etag?: string;
  selfLink?: string;
  mimeType?: string;
  modifiedDate?: string;
  fileSize?: string;
  md5Checksum?: string;
  originalFilename?: string;
  downloadUrl?: string;
  exportLinks?: Record<string, string>;
  lastModifyingUser?: User;
  lastModifyingUserName?: string;
  pinned?: boolean;
  published?: boolean;
  publishAuto?: boolean;
  publishedLink?: string;
  publishedOutsideDomain?: boolean;
}

/** `storage#drive`: a shared drive. */
export interface Drive {
  kind?: 'storage#drive';
  id?: string;
  name?: string;
  hidden?: boolean;
  createdDate?: string;
  colorRgb?: string;
  themeId?: string;
  orgUnitId?: string;
  backgroundImageLink?: string;
  backgroundImageFile?: { id?: string; width?: number; xCoordinate?: number; yCoordinate?: number };
  capabilities?: Record<string, boolean>;
  restrictions?: {
    adminManagedRestrictions?: boolean;
    copyRequiresWriterPermission?: boolean;
    domainUsersOnly?: boolean;
    driveMembersOnly?: boolean;
    sharingFoldersRequiresOrganizerPermission?: boolean;
  };
}

/** `storage#change`: one entry of the change log. */
export interface Change {
  kind?: 'storage#change';
  id?: string;
  selfLink?: string;
  type?: 'file' | 'drive' | (string & {});
  changeType?: string;
  fileId?: string;
  file?: File;
  driveId?: string;
  drive?: Drive;
  deleted?: boolean;
  modificationDate?: string;
}

/** `api#channel`: a watch registration (changes.watch, files.watch) and what channels.stop takes. */
export interface Channel {
  kind?: 'api#channel';
  id?: string;
  resourceId?: string;
  resourceUri?: string;
  /** Sent back in every notification's X-Goog-Channel-Token. */
  token?: string;
  /** Milliseconds since the epoch, as a string. */
  expiration?: string;
  type?: 'web_hook' | (string & {});
  address?: string;
  params?: Record<string, string>;
  payload?: boolean;
}

/** `storage#about`: the user, quotas and settings. */
export interface About {
  kind?: 'storage#about';
  etag?: string;
  selfLink?: string;
  name?: string;
  user?: User;
  permissionId?: string;
  rootFolderId?: string;
  languageCode?: string;
  quotaType?: string;
  quotaBytesTotal?: string;
  quotaBytesUsed?: string;
  quotaBytesUsedAggregate?: string;
  quotaBytesUsedInTrash?: string;
  quotaBytesByService?: Array<{ serviceName?: string; bytesUsed?: string }>;
  largestChangeId?: string;
  remainingChangeIds?: string;
  domainSharingPolicy?: string;
  isCurrentAppInstalled?: boolean;
  canCreateDrives?: boolean;
  folderColorPalette?: string[];
  maxUploadSizes?: Array<{ type?: string; size?: string }>;
  importFormats?: Array<{ source?: string; targets?: string[] }>;
  exportFormats?: Array<{ source?: string; targets?: string[] }>;
  features?: Array<{ featureName?: string; featureRate?: number }>;
  additionalRoleInfo?: Array<{ type?: string; roleSets?: Array<{ primaryRole?: string; additionalRoles?: string[] }> }>;
  driveThemes?: Array<{ id?: string; backgroundImageLink?: string; colorRgb?: string }>;
}

/** `storage#app`: an app installed for the user. */
export interface App {
  kind?: 'storage#app';
  id?: string;
  name?: string;
  objectType?: string;
  shortDescription?: string;
  longDescription?: string;
  productId?: string;
  productUrl?: string;
  installed?: boolean;
  authorized?: boolean;
  useByDefault?: boolean;
  hasDriveWideScope?: boolean;
  supportsCreate?: boolean;
  supportsImport?: boolean;
  supportsMultiOpen?: boolean;
  supportsOfflineCreate?: boolean;
  createUrl?: string;
  createInFolderTemplate?: string;
  openUrlTemplate?: string;
  primaryMimeTypes?: string[];
  secondaryMimeTypes?: string[];
  primaryFileExtensions?: string[];
  secondaryFileExtensions?: string[];
  icons?: Array<{ category?: string; iconUrl?: string; size?: number }>;
}

/** `storage#generatedIds` (files.generateIds) */
export interface GeneratedIds {
  kind?: 'storage#generatedIds';
  ids?: string[];
  space?: string;
}

/** `storage#generateCseTokenResponse` (files.generateCseToken) */
export interface GenerateCseTokenResponse {
  kind?: 'storage#generateCseTokenResponse';
  fileId?: string;
  jwt?: string;
  currentKaclsId?: string;
  currentKaclsName?: string;
}

/** `storage#startPageToken` (changes.getStartPageToken) */
export interface StartPageToken {
  kind?: 'storage#startPageToken';
  startPageToken?: string;
}

/** What every list wrapper has. */
interface ListOf<Kind extends string, T> {
  kind?: Kind;
  etag?: string;
  selfLink?: string;
  nextLink?: string;
  nextPageToken?: string;
  items?: T[];
}

export type FileList = ListOf<'storage#fileList', File> & { incompleteSearch?: boolean };
export type ChildList = ListOf<'storage#childList', ChildReference>;
export type ParentList = ListOf<'storage#parentList', ParentReference>;
export type PermissionList = ListOf<'storage#permissionList', Permission>;
export type PropertyList = ListOf<'storage#propertyList', Property>;
export type CommentList = ListOf<'storage#commentList', Comment>;
export type CommentReplyList = ListOf<'storage#commentReplyList', CommentReply>;
export type RevisionList = ListOf<'storage#revisionList', Revision>;
export type DriveList = ListOf<'storage#driveList', Drive>;
export type LabelList = ListOf<'storage#labelList', Label>;
export type AppList = ListOf<'storage#appList', App> & { defaultAppIds?: string[] };
/** A page of the change log: `nextPageToken` while changes remain, `newStartPageToken` (never both) at the end. */
export type ChangeList = ListOf<'storage#changeList', Change> & { largestChangeId?: string; newStartPageToken?: string };
