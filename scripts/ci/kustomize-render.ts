import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Manifest = Record<string, any>;

interface Kustomization {
  resources?: string[];
  namespace?: string;
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  patches?: Array<{ path: string }>;
}

/** The fields this renderer understands; anything else in a kustomization is refused, not ignored. */
const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'images', 'patches']);
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'PriorityClass', 'StorageClass']);

export function readYamlDocuments(path: string): Manifest[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`${path}: ${document.errors.map((error) => error.message).join('; ')}`);
      return document.toJS() as Manifest;
    })
    .filter((manifest) => manifest !== null && manifest !== undefined);
}

function isPlainObject(value: unknown): value is Manifest {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A strategic merge patch, as far as these manifests need it: maps merge key by key, lists of
 * objects that all have a `name` merge by name (containers, env, ports, volumes), other lists and
 * scalars are replaced, and `null` deletes.
 */
export function strategicMerge(target: unknown, patch: unknown): unknown {
  if (patch === null) return undefined;
  if (isPlainObject(target) && isPlainObject(patch)) {
    const merged: Manifest = { ...target };
    for (const [key, value] of Object.entries(patch)) {
      const next = strategicMerge(target[key], value);
      if (next === undefined) delete merged[key];
      else merged[key] = next;
    }
    return merged;
  }
  const byName = (list: unknown): list is Manifest[] =>
    Array.isArray(list) && list.length > 0 && list.every((item) => isPlainObject(item) && typeof item.name === 'string');
  if (byName(target) && byName(patch)) {
    const merged = target.map((item) => {
      const change = patch.find((candidate) => candidate.name === item.name);
      return change ? (strategicMerge(item, change) as Manifest) : item;
    });
    for (const item of patch) if (!target.some((existing) => existing.name === item.name)) merged.push(item);
    return merged;
  }
  return structuredClone(patch);
}

function podSpecs(manifest: Manifest): Manifest[] {
  if (manifest.kind === 'Pod') return [manifest.spec];
  if (manifest.kind === 'CronJob') return [manifest.spec?.jobTemplate?.spec?.template?.spec].filter(Boolean);
  return [manifest.spec?.template?.spec].filter(Boolean);
}

function setImage(image: string, rules: NonNullable<Kustomization['images']>): string {
  const match = /^([^:@]+)(?::([^@]+))?(@.+)?$/.exec(image);
  if (!match) return image;
  const rule = rules.find((candidate) => candidate.name === match[1]);
  if (!rule) return image;
  const name = rule.newName ?? match[1];
  const tag = rule.newTag ?? match[2];
  return tag ? `${name}:${tag}` : `${name}${match[3] ?? ''}`;
}

/** `kustomize build <dir>` for the subset of Kustomize these manifests use. */
export function renderKustomization(directory: string): Manifest[] {
  const root = resolve(directory);
  const kustomization = readYamlDocuments(join(root, 'kustomization.yaml'))[0] as Kustomization & Manifest;
  for (const key of Object.keys(kustomization)) {
    if (!SUPPORTED.has(key)) throw new Error(`${join(root, 'kustomization.yaml')}: '${key}' is not supported by this renderer`);
  }
  let manifests: Manifest[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = join(root, resource);
    manifests.push(...(statSync(path).isDirectory() ? renderKustomization(path) : readYamlDocuments(path)));
  }
  for (const { path } of kustomization.patches ?? []) {
    for (const patch of readYamlDocuments(join(root, path))) {
      const index = manifests.findIndex((manifest) => manifest.kind === patch.kind && manifest.metadata?.name === patch.metadata?.name);
      if (index < 0) throw new Error(`${join(root, path)}: no ${patch.kind} named ${patch.metadata?.name} to patch`);
      manifests[index] = strategicMerge(manifests[index], patch) as Manifest;
    }
  }
  if (kustomization.namespace) {
    manifests = manifests.map((manifest) =>
      CLUSTER_SCOPED.has(manifest.kind) ? manifest : { ...manifest, metadata: { ...manifest.metadata, namespace: kustomization.namespace } },
    );
  }
  if (kustomization.images) {
    for (const manifest of manifests) {
      for (const spec of podSpecs(manifest)) {
        for (const container of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) container.image = setImage(container.image, kustomization.images);
      }
    }
  }
  return manifests;
}

export function manifestKey(manifest: Manifest): string {
  return `${manifest.kind}/${manifest.metadata?.namespace ?? ''}/${manifest.metadata?.name}`;
}
