// Pulumi dynamic resources, one file each; each engineer adds its export here.
export {};
