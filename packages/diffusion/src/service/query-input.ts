import { BadInput, type HttpRequest, IODescriptor, type ProtoField, type SchemaObject } from '@tiffin/core';
import type { z } from 'zod';

/**
 * The input of a `GET` API (or another method without a body): its query string (`?id=...`), checked against a zod object of string fields.
 * A violation is a 400 naming the parameter.
 */
export class QueryInput<S extends z.ZodObject> extends IODescriptor<z.output<S>, never> {
  readonly protoFields: readonly ProtoField[] = [];

  constructor(
    private readonly schema: S,
    private readonly methods: readonly string[] = ['GET'],
  ) {
    super();
  }

  get mimeType(): null {
    return null;
  }

  override get httpMethods(): readonly string[] {
    return this.methods;
  }

  async fromHttpRequest(request: HttpRequest): Promise<z.output<S>> {
    const result = this.schema.safeParse(Object.fromEntries(request.query));
    if (result.success) return result.data;
    const issue = result.error.issues[0];
    throw new BadInput(`query parameter ${issue.path.join('.') || '?'}: ${issue.message}`);
  }

  toHttpResponse(): Promise<never> {
    return Promise.reject(new BadInput('query parameters are an input only'));
  }

  override openapiSchema(): SchemaObject {
    return { type: 'object' };
  }

  override openapiComponents(): null {
    return null;
  }

  override openapiExample(): null {
    return null;
  }
}
