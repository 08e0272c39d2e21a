// An ES-module Pulumi program importing gantry and its providers.
import * as gantry from 'gantry';
import * as providers from 'gantry/providers';

export const version = gantry.version;
export const libraryExports = Object.keys(gantry).sort();
export const providerExports = Object.keys(providers).sort();
