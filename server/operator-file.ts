import { readFileSync } from 'node:fs';
import * as v from 'valibot';

/**
 * A JSON file an operator names in a setting (bounce rules, shaping profiles): its content, or an
 * error that says which kind of file, where, and why it cannot be used.
 */
export function readOperatorFile(kind: string, path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`${kind} ${path} cannot be read: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${kind} ${path} is not JSON: ${(err as Error).message}`);
  }
}

/** The content validated by `schema`, or an error naming the kind of file, where it came from, and its first problem with its path. */
export function parseOperatorFile<T extends v.GenericSchema>(
  kind: string,
  schema: T,
  content: unknown,
  origin: string,
): v.InferOutput<T> {
  const result = v.safeParse(schema, content);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = v.getDotPath(issue);
  throw new Error(`${kind} ${origin} is invalid: ${path ? `${path}: ` : ''}${issue.message}`);
}
