// files.listLabels, files.modifyLabels (STO-FILES-LISTLABELS, STO-FILES-MODIFYLABELS) and files.export
// (STO-FILES-EXPORT: the stored bytes of a workspace document in an export format, capped at 10 MB like Drive).
import { stat } from 'node:fs/promises';
import { sendContent } from './content.js';
import type { Ctx, Handler } from './context.js';
import { badRequest, readJson, StorageFailure } from './http.js';
import type { LabelRecord } from './store.js';

export const EXPORT_LIMIT = 10 * 1024 * 1024;

/** Drive's export formats of the workspace types this server knows. */
export const EXPORT_FORMATS: Record<string, string[]> = {
  'application/vnd.google-apps.document': ['text/plain', 'text/html', 'application/pdf', 'application/rtf', 'application/vnd.oasis.opendocument.text', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'text/markdown', 'application/zip', 'application/epub+zip'],
  'application/vnd.google-apps.spreadsheet': ['text/csv', 'text/tab-separated-values', 'application/pdf', 'application/zip', 'application/vnd.oasis.opendocument.spreadsheet', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  'application/vnd.google-apps.presentation': ['text/plain', 'application/pdf', 'application/vnd.oasis.opendocument.presentation', 'application/vnd.openxmlformats-officedocument.presentationml.presentation'],
  'application/vnd.google-apps.drawing': ['image/png', 'image/jpeg', 'image/svg+xml', 'application/pdf'],
};

function labelJson(l: LabelRecord) {
  return { kind: 'storage#label', id: l.id, revisionId: l.revisionId, fields: l.fields };
}

export const listLabels: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  return { status: 200, body: { kind: 'storage#labelList', items: (ctx.model.data.labels[file.id] ?? []).map(labelJson) } };
};

export const modifyLabels: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const body = await readJson(ctx.req);
  if (!Array.isArray(body.labelModifications)) throw badRequest('Required: labelModifications', 'labelModifications', 'required');
  const labels = (ctx.model.data.labels[file.id] ??= []);
  const modified: LabelRecord[] = [];
  for (const m of body.labelModifications as { labelId?: unknown; removeLabel?: unknown; fieldModifications?: unknown }[]) {
    if (typeof m?.labelId !== 'string' || m.labelId === '') throw badRequest('A label modification needs a labelId', 'labelModifications.labelId', 'required');
    const i = labels.findIndex((l) => l.id === m.labelId);
    if (m.removeLabel === true) {
      if (i >= 0) labels.splice(i, 1);
      continue;
    }
    const label = i >= 0 ? labels[i]! : { id: m.labelId, revisionId: '0', fields: {} };
    if (i < 0) labels.push(label);
    for (const f of (Array.isArray(m.fieldModifications) ? m.fieldModifications : []) as Record<string, unknown>[]) {
      if (typeof f?.fieldId !== 'string') throw badRequest('A field modification needs a fieldId', 'fieldModifications.fieldId', 'required');
      if (f.unsetValues === true) delete label.fields[f.fieldId];
      else label.fields[f.fieldId] = { kind: 'storage#labelField', id: f.fieldId, ...Object.fromEntries(Object.entries(f).filter(([k]) => k.startsWith('set')).map(([k, v]) => [k.slice(3, 4).toLowerCase() + k.slice(4), v])) };
    }
    label.revisionId = String(Number(label.revisionId) + 1);
    modified.push(label);
  }
  ctx.model.changed(file, false);
  return { status: 200, body: { kind: 'storage#modifyLabelsResponse', modifiedLabels: modified.map(labelJson) } };
};

export const exportFile: Handler = async (ctx: Ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const mimeType = ctx.query.get('mimeType');
  if (!mimeType) throw new StorageFailure(400, 'required', 'Required parameter: mimeType', 'mimeType');
  const formats = EXPORT_FORMATS[file.mimeType];
  if (!formats) throw new StorageFailure(403, 'fileNotExportable', 'Export only supports Docs Editors files.', 'fileId');
  if (!formats.includes(mimeType)) throw badRequest('The requested conversion is not supported.', 'convertTo', 'badRequest');
  const size = file.headRevisionId ? (await stat(ctx.model.store.contentPath(file.headRevisionId))).size : 0;
  if (size > ctx.exportLimitBytes) throw new StorageFailure(403, 'exportSizeLimitExceeded', 'This file is too large to be exported.', undefined, 'other');
  await sendContent(ctx.req, ctx.res, ctx.model, { ...file, mimeType }, file.headRevisionId, ctx.faults.cut('download'));
  return undefined;
};
