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
  'application/vnd.google-apps.document': [
    'text/plain',
    'text/html',
    'application/pdf',
    'application/rtf',
    'application/vnd.oasis.opendocument.text',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'text/markdown',
    'application/zip',
    'application/epub+zip',
  ],
  'application/vnd.google-apps.spreadsheet': [
    'text/csv',
    'text/tab-separated-values',
    'application/pdf',
    'application/zip',
    'application/vnd.oasis.opendocument.spreadsheet',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ],
  'application/vnd.google-apps.presentation': [
    'text/plain',
    'application/pdf',
    'application/vnd.oasis.opendocument.presentation',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  ],
  'application/vnd.google-apps.drawing': ['image/png', 'image/jpeg', 'image/svg+xml', 'application/pdf'],
};

/**
 * Drive v2's LabelFieldModification sets one kind of value (`setTextValues`, `setIntegerValues`, `setDateValues`,
 * `setSelectionValues`, `setUserValues`); the LabelField it makes carries them under Drive's names (`text`, `integer`,
 * `dateString`, `selection`, `user` as storage#user objects) with `valueType` saying which.
 */
const VALUE_KINDS: Record<string, { valueType: string; check: RegExp; what: string }> = {
  setTextValues: { valueType: 'text', check: /^[\s\S]*$/, what: 'text' },
  setIntegerValues: { valueType: 'integer', check: /^-?\d{1,19}$/, what: 'whole numbers (as strings)' },
  setDateValues: { valueType: 'dateString', check: /^\d{4}-\d{2}-\d{2}$/, what: 'dates as YYYY-MM-DD' },
  setSelectionValues: { valueType: 'selection', check: /^\S+$/, what: 'choice ids' },
  setUserValues: { valueType: 'user', check: /^[^\s@]+@[^\s@]+\.[^\s@]+$/, what: 'e-mail addresses' },
};

function labelField(fieldId: string, f: Record<string, unknown>): Record<string, unknown> {
  const given = Object.keys(VALUE_KINDS).filter((k) => f[k] !== undefined && f[k] !== null);
  if (given.length !== 1)
    throw badRequest(
      `A field modification sets exactly one kind of value (${Object.keys(VALUE_KINDS).join(', ')}) or unsetValues`,
      `fieldModifications.${fieldId}`,
    );
  const key = given[0]!;
  const kind = VALUE_KINDS[key]!;
  const values = f[key];
  if (!Array.isArray(values) || values.some((v) => typeof v !== 'string' || !kind.check.test(v)))
    throw badRequest(`${key} takes a list of ${kind.what}`, `fieldModifications.${key}`);
  const field: Record<string, unknown> = { kind: 'storage#labelField', id: fieldId, valueType: kind.valueType };
  field[kind.valueType] =
    kind.valueType === 'user'
      ? (values as string[]).map((email) => ({ kind: 'storage#user', emailAddress: email.toLowerCase(), displayName: email }))
      : [...values];
  return field;
}

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
      if (typeof f?.fieldId !== 'string' || f.fieldId === '')
        throw badRequest('A field modification needs a fieldId', 'fieldModifications.fieldId', 'required');
      if (f.unsetValues === true) delete label.fields[f.fieldId];
      else label.fields[f.fieldId] = labelField(f.fieldId, f);
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
