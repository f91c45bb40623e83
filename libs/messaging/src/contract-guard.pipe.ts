import type { ArgumentMetadata, PipeTransform } from '@nestjs/common';
import { getMetadataStorage, ValidationTypes, type MetadataStorage } from 'class-validator';
import { RelayError } from '@app/contracts';

type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];

type Shape = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'any';

interface FieldGuard {
  name: string;
  shape: Shape;
  /** Absent or null is allowed (`@IsOptional`, or validated only under a condition). */
  optional: boolean;
  /** An array whose items must each have `itemShape`. */
  itemShape?: Shape;
  /** The fields of a nested contract object, guarded one level down. */
  nested?: ContractGuard;
  /** The values it may take (`@IsIn`), or each of its items may take (`@IsIn(…, { each: true })`). */
  allowed?: ReadonlySet<unknown>;
  allowedEach?: ReadonlySet<unknown>;
  /** `@IsNotEmpty`: present means not the empty string either. */
  nonEmpty?: boolean;
}

interface ContractGuard {
  fields: FieldGuard[];
  names: ReadonlySet<string>;
}

const SHAPE_OF_CONSTRAINT: Record<string, Shape> = {
  isString: 'string',
  isInt: 'integer',
  isNumber: 'number',
  isBoolean: 'boolean',
  isArray: 'array',
  isObject: 'object',
  isBoundedMetadata: 'object',
  isISO8601: 'string',
  isUUID: 'string',
  isUrl: 'string',
  matches: 'string',
};

function hasShape(value: unknown, shape: Shape): boolean {
  switch (shape) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'any':
      return true;
  }
}

const SHAPE_NAMES: Record<Shape, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  any: 'a value',
};

function isContractClass(type: unknown): type is new () => object {
  return typeof type === 'function' && type !== Object && type !== Array && type !== String && type !== Number && type !== Boolean;
}

const compiled = new WeakMap<object, ContractGuard | null>();

/**
 * The guard of one contract class, read once from the class-validator decorators that describe
 * it: which fields exist, which are required, each one's JSON type and enumerated values. Length,
 * range, pattern and bound checks are left to the edge, where the payload entered the relay.
 */
function guardOf(contract: new () => object, depth = 0): ContractGuard | null {
  if (compiled.has(contract)) return compiled.get(contract)!;
  const metadata = getMetadataStorage().getTargetValidationMetadatas(contract, '', true, false);
  if (metadata.length === 0) {
    compiled.set(contract, null);
    return null;
  }
  const byField = new Map<string, ValidationMetadata[]>();
  for (const entry of metadata) byField.set(entry.propertyName, [...(byField.get(entry.propertyName) ?? []), entry]);
  const fields: FieldGuard[] = [];
  for (const [name, entries] of byField) {
    const field: FieldGuard = { name, shape: 'any', optional: entries.some((entry) => entry.type === ValidationTypes.CONDITIONAL_VALIDATION) };
    for (const entry of entries) {
      if (entry.type === ValidationTypes.NESTED_VALIDATION) {
        if (entry.each) {
          field.shape = 'array';
          field.itemShape = 'object';
        } else {
          field.shape = 'object';
          const type: unknown = Reflect.getMetadata('design:type', contract.prototype, name);
          if (depth < 1 && isContractClass(type)) field.nested = guardOf(type, depth + 1) ?? undefined;
        }
        continue;
      }
      if (entry.type !== ValidationTypes.CUSTOM_VALIDATION || !entry.name) continue;
      if (entry.name === 'isIn') {
        if (entry.each) field.allowedEach = new Set(entry.constraints[0] as unknown[]);
        else field.allowed = new Set(entry.constraints[0] as unknown[]);
        continue;
      }
      if (entry.name === 'isNotEmpty') {
        field.nonEmpty = !entry.each;
        continue;
      }
      const shape = SHAPE_OF_CONSTRAINT[entry.name];
      if (!shape || shape === 'any') continue;
      if (entry.each) field.itemShape = shape;
      else if (field.shape === 'any') field.shape = shape;
    }
    fields.push(field);
  }
  const guard = { fields, names: new Set(byField.keys()) };
  compiled.set(contract, guard);
  return guard;
}

function problemIn(value: Record<string, unknown>, guard: ContractGuard, parent: string): { field: string; problem: string } | undefined {
  for (const key in value) {
    if (!guard.names.has(key)) return { field: parent + key, problem: 'is not a field of this request' };
  }
  for (const field of guard.fields) {
    const current = value[field.name];
    const path = parent + field.name;
    if (current === undefined || current === null || (field.nonEmpty && current === '')) {
      if (field.optional && current !== '') continue;
      return { field: path, problem: current === '' ? 'must not be empty' : 'is required' };
    }
    if (!hasShape(current, field.shape)) return { field: path, problem: `must be ${SHAPE_NAMES[field.shape]}` };
    if (field.allowed && !field.allowed.has(current)) return { field: path, problem: 'is not one of the allowed values' };
    if (Array.isArray(current)) {
      const { itemShape, allowedEach } = field;
      if (itemShape) {
        const index = current.findIndex((item) => !hasShape(item, itemShape));
        if (index >= 0) return { field: `${path}[${index}]`, problem: `must be ${SHAPE_NAMES[itemShape]}` };
      }
      if (allowedEach) {
        const index = current.findIndex((item) => !allowedEach.has(item));
        if (index >= 0) return { field: `${path}[${index}]`, problem: 'is not one of the allowed values' };
      }
    }
    if (field.nested) {
      const nested = problemIn(current as Record<string, unknown>, field.nested, `${path}.`);
      if (nested) return nested;
    }
  }
  return undefined;
}

/**
 * The services' check of what arrives on NATS: the payload has the shape its contract class
 * describes (known fields only, the required ones present, each of its JSON type). The values
 * themselves were validated once, where they entered the relay (the edge's parsers and admin
 * pipes); this guard catches a caller built against another version of the contracts. A
 * mismatch is an `invalid_params` RelayError naming the field.
 */
export class ContractGuardPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'custom' || !isContractClass(metadata.metatype)) return value;
    const guard = guardOf(metadata.metatype);
    if (!guard) return value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RelayError('invalid_params', 'The request must be an object');
    const problem = problemIn(value as Record<string, unknown>, guard, '');
    if (problem) throw new RelayError('invalid_params', `${problem.field}: ${problem.problem}`, { field: problem.field });
    return value;
  }
}
