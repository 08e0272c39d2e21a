// During a preview (and an `up` before a dependency exists) the engine hands Check the placeholder for a value not
// known yet — an input built from another resource's output. Check validates such a value once it is known, on the
// run that knows it, instead of refusing the preview.
import * as pulumi from '@pulumi/pulumi';

export function containsUnknown(value: unknown): boolean {
  if (value === pulumi.runtime.unknownValue) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (typeof value === 'object' && value !== null) return Object.values(value).some(containsUnknown);
  return false;
}
