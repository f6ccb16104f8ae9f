/**
 * The distribution name of a PEP 508 requirement ("requests[socks]>=2; python_version>'3.8'"
 * → "requests"), normalised as PEP 503 says, and the import names it most
 * likely provides when no installed metadata says otherwise.
 */
import { ownValue } from '../../own-value.ts';

const NAME = /^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)/;

export function requirementName(requirement: string): string | undefined {
  return NAME.exec(requirement)?.[1];
}

export function normalizeDistribution(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** A requirement's distribution name as pip compares names (case, and - _ . alike): "Six>=1" and "six" are one. */
export function distributionKey(requirement: string): string {
  return normalizeDistribution(requirementName(requirement) ?? requirement);
}

/** Distributions whose import name is not their own name (the common ones). */
const KNOWN_IMPORTS: Record<string, string[]> = {
  pyyaml: ['yaml'],
  'beautifulsoup4': ['bs4'],
  pillow: ['PIL'],
  'scikit-learn': ['sklearn'],
  'python-dateutil': ['dateutil'],
  'opencv-python': ['cv2'],
  'opencv-python-headless': ['cv2'],
  protobuf: ['google'],
  'python-dotenv': ['dotenv'],
  'pyjwt': ['jwt'],
  'typing-extensions': ['typing_extensions'],
  'attrs': ['attr', 'attrs'],
  'pymupdf': ['fitz', 'pymupdf'],
};

export function guessedImportNames(distribution: string): string[] {
  const normal = normalizeDistribution(distribution);
  return ownValue(KNOWN_IMPORTS, normal) ?? [normal.replace(/-/g, '_')];
}

/**
 * The distribution to declare for a top-level import name, where it is not the import's own name
 * (`yaml` → pyyaml, `PIL` → pillow); undefined when unknown or ambiguous (`google` is many packages).
 */
export function knownDistributionFor(importName: string): string | undefined {
  if (importName === 'google') return undefined;
  return Object.entries(KNOWN_IMPORTS).find(([distribution, imports]) => imports.includes(importName) && !distribution.endsWith('-headless') && distribution !== importName)?.[0];
}
