import SwaggerParser from '@apidevtools/swagger-parser';
import { Service } from '@tiffin/core';
import { buildOpenApiDocument } from '@tiffin/core/internal';
import type { OpenAPI } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { PandasDataFrame, PandasSeries } from '../src/index.js';

describe('/docs.json with pandas descriptors is valid OpenAPI 3', () => {
  it('validates for every orient and format of DataFrame and Series', async () => {
    const svc = new Service('pandas');
    const echo = <T>(x: T) => x;
    for (const orient of ['records', 'split', 'index', 'columns', 'values', 'table'] as const) {
      svc.api(
        {
          name: `frame_${orient}`,
          input: new PandasDataFrame({ orient, columns: ['a', 'b'], dtype: { a: 'float64', b: 'str' } }),
          output: new PandasDataFrame({ orient }),
        },
        echo,
      );
    }
    svc.api(
      {
        name: 'csv',
        input: new PandasDataFrame({ default_format: 'csv' }),
        output: new PandasDataFrame({ default_format: 'parquet' }),
      },
      echo,
    );
    svc.api(
      {
        name: 'series',
        input: new PandasSeries({ dtype: 'float64' }),
        output: new PandasSeries({ orient: 'index' }),
      },
      echo,
    );
    const doc = buildOpenApiDocument(svc);
    await expect(SwaggerParser.validate(structuredClone(doc) as OpenAPI.Document)).resolves.toBeTruthy();
  });
});
