/**
 * VENDORS: the model vendors hatchery-mcp calls through their SDKs, and what every other part asks
 * of them. Adding a vendor: its provider (`x.ts`, `x-convert.ts`), its VendorInfo (`x-vendor.ts`),
 * and one line here.
 */
import { ANTHROPIC } from './anthropic-vendor.js';
import { OPENAI } from './openai-vendor.js';
import type { VendorInfo } from './types.js';

export type { VendorInfo } from './types.js';

/** Every SDK vendor, in the order their keys choose the default model (OPENAI_API_KEY first). */
export const VENDORS = [OPENAI, ANTHROPIC] as const;

/** The id of a vendor of VENDORS: `openai`, `anthropic`. */
export type SdkVendor = (typeof VENDORS)[number]['id'];

const BY_ID: ReadonlyMap<string, VendorInfo<SdkVendor>> = new Map(VENDORS.map((v) => [v.id, v]));

/** The vendor of this id or model prefix (any case), or undefined. */
export function findVendor(id: string): VendorInfo<SdkVendor> | undefined {
  return BY_ID.get(id.toLowerCase());
}

/** The vendor of this id. */
export function vendorInfo(id: SdkVendor): VendorInfo<SdkVendor> {
  return BY_ID.get(id) as VendorInfo<SdkVendor>;
}

/** The model (`vendor:model`) a vendor's key selects when nothing names one and HATCHERY_MODEL is unset. */
export function vendorDefault(id: SdkVendor): string {
  return `${id}:${vendorInfo(id).defaultModel}`;
}

/** The vendor a bare model name (no prefix) goes to: the one whose barePrefix it starts with, else the first. */
export function bareVendor(model: string): SdkVendor {
  return (VENDORS.find((v) => v.barePrefix !== undefined && model.startsWith(v.barePrefix)) ?? VENDORS[0]).id;
}

/** The key variables, for messages: `OPENAI_API_KEY or ANTHROPIC_API_KEY`. */
export const KEY_VARS_TEXT = VENDORS.map((v) => v.keyVar).join(' or ');
