/**
 * An OpenAPI 3.1 document of the upstream as daybook understands it, generated from the
 * client's zod schemas (so it cannot drift from what the client accepts). The simulator serves
 * it at /openapi.json; a committed copy (openapi.json beside this file) is for readers, and a
 * test keeps the two equal.
 */
import { type ZodType, z } from 'zod';
import { ENT_NAME_MAX, LIST_LIMIT_MAX } from './params.ts';
import { EnterpriseSuccess, ErrorBody, exact, ProductDetailSuccess, ProductListSuccess } from './schemas.ts';

function schema(s: ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, {
    io: 'input',
    unrepresentable: 'any',
    target: 'draft-2020-12',
    // A number a double cannot hold exactly is still a JSON number on the wire.
    override: (ctx) => {
      if (ctx.zodSchema === exact) ctx.jsonSchema.type = 'number';
    },
  });
  return rest;
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** The document; pure, deterministic. */
export function buildOpenApi(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Enterprise Registry and Product Listing Query API (as daybook reads it)',
      version: 'v1',
      description:
        "Generated from daybook's response schemas (src/upstream/schemas.ts). Readers are tolerant: unknown fields are kept, optional fields may be missing or null. HTTP statuses of errors are not documented upstream: an error body may come with any status, 200 included.",
    },
    servers: [{ url: 'http://127.0.0.1:8787', description: 'daybook sim' }],
    security: [{ bearer: [] }],
    paths: {
      '/v1/enterprise-search': {
        get: {
          operationId: 'searchEnterprise',
          summary:
            'One enterprise record by name keyword (3 credits on success; data refreshed daily at 03:00 Beijing time).',
          parameters: [
            {
              name: 'ent_name',
              in: 'query',
              required: true,
              schema: { type: 'string', minLength: 1, maxLength: ENT_NAME_MAX },
              description: 'Enterprise name keyword; matched by a model, a complete name matches best.',
            },
          ],
          responses: {
            '200': {
              description: 'The record, or an error body (status: error).',
              content: {
                'application/json': {
                  schema: {
                    oneOf: [
                      { $ref: '#/components/schemas/EnterpriseSuccess' },
                      { $ref: '#/components/schemas/Error' },
                    ],
                  },
                },
              },
            },
            '4XX': errorResponse(
              'invalid_parameter, not_found, insufficient_credits, rate_limit_exceeded (statuses not documented)',
            ),
            '5XX': errorResponse('server error; the body may not be JSON'),
          },
        },
      },
      '/v1/product-listing': {
        get: {
          operationId: 'productListing',
          summary: 'The trending list of a date, or one product by name (never both).',
          parameters: [
            {
              name: 'date',
              in: 'query',
              schema: { type: 'string', format: 'date' },
              description: 'YYYY-MM-DD',
            },
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 1, maximum: LIST_LIMIT_MAX },
              description: 'Only with date. Default not documented.',
            },
            { name: 'product_name', in: 'query', schema: { type: 'string', minLength: 1 } },
          ],
          responses: {
            '200': {
              description: 'A list (date) or a detail (product_name), or an error body.',
              content: {
                'application/json': {
                  schema: {
                    oneOf: [
                      { $ref: '#/components/schemas/ProductListSuccess' },
                      { $ref: '#/components/schemas/ProductDetailSuccess' },
                      { $ref: '#/components/schemas/Error' },
                    ],
                  },
                },
              },
            },
            '4XX': errorResponse(
              'invalid_date, invalid_product_name, missing_parameters, rate_limit_exceeded',
            ),
            '5XX': errorResponse('server error; the body may not be JSON'),
          },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        EnterpriseSuccess: schema(EnterpriseSuccess),
        ProductListSuccess: schema(ProductListSuccess),
        ProductDetailSuccess: schema(ProductDetailSuccess),
        Error: schema(ErrorBody),
      },
    },
  };
}

/** The document as committed: pretty JSON with a final newline. */
export function openApiText(): string {
  return `${JSON.stringify(buildOpenApi(), null, 2)}\n`;
}
