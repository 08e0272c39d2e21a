// An ES-module Pulumi program: one BrowserCheck of the page the test serves; stack outputs are the check's outputs.
import * as pulumi from '@pulumi/pulumi';
import { BrowserCheck } from 'gantry/providers';

export default async function ({ url, secretUrl, title, titleMatch, status, triggers }) {
  const check = new BrowserCheck('site', { url: secretUrl ? pulumi.secret(url) : url, title, titleMatch, status, triggers });
  return {
    passed: check.passed,
    pageTitle: check.pageTitle,
    httpStatus: check.httpStatus,
    statusFrom: check.statusFrom,
    finalUrl: check.finalUrl,
    checkedAt: check.checkedAt,
  };
}
