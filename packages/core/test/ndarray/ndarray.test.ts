import { describe, expect, it } from 'vitest';
import { parseJson } from '../../src/encoding/json-parse.js';
import { BadInput, InvalidArgument, TiffinError, UnprocessableEntity } from '../../src/errors/index.js';
import {
  canCastSameKind,
  DTYPES,
  type DType,
  DTypeConversionError,
  formatShape,
  NDArray,
  ndarrayToJson,
  normalizeDType,
  RaggedArrayError,
  roundToFloat16,
  shapesMatch,
} from '../../src/ndarray/index.js';
import { formatPyFloat } from '../../src/ndarray/text.js';

/** Parse with the exact parser, as NumpyNdarray does, then build. */
const fromJson = (text: string, dtype?: string) => NDArray.from(parseJson(text, { exact: true }), dtype);

describe('dtype names (docs/spec/io-descriptors.md §2.2)', () => {
  it.each([
    ['bool', 'bool'],
    ['?', 'bool'],
    ['int', 'int64'],
    ['i1', 'int8'],
    ['i2', 'int16'],
    ['i4', 'int32'],
    ['i8', 'int64'],
    ['long', 'int64'],
    ['u1', 'uint8'],
    ['u2', 'uint16'],
    ['u4', 'uint32'],
    ['u8', 'uint64'],
    ['float', 'float64'],
    ['double', 'float64'],
    ['f8', 'float64'],
    ['f4', 'float32'],
    ['f2', 'float16'],
    ['half', 'float16'],
    ['<f8', 'float64'],
    ['str', 'str'],
    ['U', 'str'],
    ['<U', 'str'],
    ['<U21', 'str'],
    ['object', 'object'],
    ['O', 'object'],
  ])('%s → %s', (alias, canonical) => {
    expect(normalizeDType(alias)).toBe(canonical);
  });

  it('every canonical name normalises to itself', () => {
    for (const d of DTYPES) expect(normalizeDType(d)).toBe(d);
  });

  it('unknown and complex names are UnprocessableEntity (docs/spec/io-descriptors.md §2.1)', () => {
    expect(() => normalizeDType('float128x')).toThrow(UnprocessableEntity);
    expect(() => normalizeDType('float128x')).toThrow(/^Invalid dtype "float128x": /);
    expect(() => normalizeDType('complex')).toThrow(/complex dtypes are not supported/);
  });
});

describe('shape formatting and matching', () => {
  it('prints tuples like the reference', () => {
    expect(formatShape([2, 2])).toBe('(2, 2)');
    expect(formatShape([4])).toBe('(4,)');
    expect(formatShape([])).toBe('()');
    expect(formatShape([-1, 2])).toBe('(-1, 2)');
  });
  it('-1 is a wildcard; ranks must agree', () => {
    expect(shapesMatch([-1, 2], [5, 2])).toBe(true);
    expect(shapesMatch([2, 2], [4])).toBe(false);
    expect(shapesMatch([3], [2])).toBe(false);
  });
});

describe('inference (docs/spec/io-descriptors.md §2.2)', () => {
  it.each<[string, DType, number[]]>([
    ['[true, false]', 'bool', [2]],
    ['[[1, 2], [3, 4]]', 'int64', [2, 2]],
    ['[true, 2]', 'int64', [2]],
    ['[1, 2.5]', 'float64', [2]],
    ['[1, 2.0]', 'float64', [2]],
    ['[true, 1.5]', 'float64', [2]],
    ['[1.5, NaN, Infinity]', 'float64', [3]],
    ['[1, 9223372036854775808]', 'float64', [2]],
    ['["é", 1.5]', 'str', [2]],
    ['[null, 1]', 'object', [2]],
    ['[{"a": 1}]', 'object', [1]],
    ['{"a": 1}', 'object', []],
    ['[]', 'float64', [0]],
    ['5', 'int64', []],
    ['2.5', 'float64', []],
  ])('%s → %s %j', (json, dtype, shape) => {
    const arr = fromJson(json);
    expect(arr.dtype).toBe(dtype);
    expect(arr.shape).toEqual(shape);
  });

  it('strings convert every leaf with the reference text form', () => {
    expect(fromJson('["a", 1, 1.5, true, 2.0, 1e16]').toArray()).toEqual([
      'a',
      '1',
      '1.5',
      'True',
      '2.0',
      '1e+16',
    ]);
  });

  it('objects and null are kept as they are', () => {
    expect(fromJson('[null, 1]').toArray()).toEqual([null, 1]);
    expect(fromJson('{"a": 1}').toArray()).toEqual({ a: 1 });
  });

  it('ragged nesting is a BadInput naming where', () => {
    expect(() => fromJson('[[1, 2], [3]]')).toThrow(RaggedArrayError);
    expect(() => fromJson('[[1, 2], [3]]')).toThrow(BadInput);
    expect(() => fromJson('[[1, 2], [3]]')).toThrow(/index \[1\]/);
    expect(() => fromJson('[1, [2]]')).toThrow(RaggedArrayError);
  });

  it('JS numbers: integral values count as integers', () => {
    expect(NDArray.from([1, 2]).dtype).toBe('int64');
    expect(NDArray.from([1, 2.5]).dtype).toBe('float64');
  });

  it('typed arrays keep their dtype, zero-copy', () => {
    const f = new Float32Array([1, 2, 3]);
    const arr = NDArray.from(f);
    expect(arr.dtype).toBe('float32');
    expect(arr.data).toBe(f);
    const wrapped = new NDArray(f, [3, 1]);
    expect(wrapped.data).toBe(f);
    expect(wrapped.shape).toEqual([3, 1]);
  });
});

describe('conversion to a requested dtype (docs/spec/io-descriptors.md §2.3)', () => {
  it('floats truncate toward zero into integers', () => {
    expect(fromJson('[1.7, -2.7, 2]', 'int32').toArray()).toEqual([1, -2, 2]);
  });
  it('booleans become 0/1 and numeric strings parse', () => {
    expect(fromJson('[true, false, "7"]', 'uint8').toArray()).toEqual([1, 0, 7]);
    expect(fromJson('["1.5", "2"]', 'float64').toArray()).toEqual([1.5, 2]);
  });
  it('non-numeric strings, float strings into ints, out-of-range and null fail', () => {
    expect(() => fromJson('["2f"]', 'uint8')).toThrow(DTypeConversionError);
    expect(() => fromJson('["1.5"]', 'int64')).toThrow(DTypeConversionError);
    expect(() => fromJson('[300]', 'uint8')).toThrow(/out of range/);
    expect(() => fromJson('[null]', 'int64')).toThrow(DTypeConversionError);
    expect(() => fromJson('["x"]', 'float32')).toThrow(DTypeConversionError);
  });
  it('null becomes NaN in floats', () => {
    expect(Number.isNaN(fromJson('[null]', 'float64').data[0])).toBe(true);
  });
  it('bool uses truthiness, strings true when non-empty', () => {
    expect(fromJson('["False", "", 0, 2, null]', 'bool').toArray()).toEqual([
      true,
      false,
      false,
      true,
      false,
    ]);
  });
  it('int64/uint64 beyond 2^53 stay exact', () => {
    const big = fromJson('[9007199254740993, -9223372036854775808]', 'int64');
    expect(big.data).toBeInstanceOf(BigInt64Array);
    expect(big.data[0]).toBe(9007199254740993n);
    expect(big.data[1]).toBe(-9223372036854775808n);
    expect(big.toArray()).toEqual([9007199254740993n, -9223372036854775808n]);
    const u = fromJson('[18446744073709551615]', 'uint64');
    expect(u.data[0]).toBe(18446744073709551615n);
    expect(ndarrayToJson(u)).toBe('[18446744073709551615]');
    // Safe values come back as plain numbers.
    expect(fromJson('[1, 2]', 'int64').toArray()).toEqual([1, 2]);
  });
  it('float16 values are rounded to half precision', () => {
    const h = NDArray.from([0.1, 1, 70000], 'float16');
    expect(h.data).toBeInstanceOf(Float32Array);
    expect(h.toArray()).toEqual([0.0999755859375, 1, Number.POSITIVE_INFINITY]);
    expect(roundToFloat16(65519)).toBe(65504);
    expect(roundToFloat16(2 ** -25)).toBe(0);
    expect(roundToFloat16(2 ** -24)).toBe(2 ** -24);
  });
});

describe('every dtype round-trips', () => {
  const samples: Record<DType, unknown[]> = {
    bool: [true, false],
    int8: [-128, 127],
    int16: [-32768, 32767],
    int32: [-2147483648, 2147483647],
    int64: [-9223372036854775808n, 9223372036854775807n],
    uint8: [0, 255],
    uint16: [0, 65535],
    uint32: [0, 4294967295],
    uint64: [0, 18446744073709551615n],
    float16: [0.5, -2],
    float32: [0.5, -2.25],
    float64: [0.1, -1e300],
    str: ['a', 'é'],
    object: [{ a: 1 }, null],
  };
  for (const dtype of DTYPES) {
    it(dtype, () => {
      const arr = NDArray.from(samples[dtype], dtype);
      expect(arr.dtype).toBe(dtype);
      expect(arr.shape).toEqual([2]);
      expect(arr.size).toBe(2);
      expect(NDArray.from(arr.toArray(), dtype).toArray()).toEqual(arr.toArray());
      expect(arr.toArray()).toEqual(samples[dtype]);
    });
  }
});

describe('reshape', () => {
  it('infers one -1 and shares storage', () => {
    const arr = NDArray.from([1, 2, 3, 4, 5, 6]);
    const r = arr.reshape([-1, 3]);
    expect(r.shape).toEqual([2, 3]);
    expect(r.data).toBe(arr.data);
    expect(r.toArray()).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
  });
  it('impossible reshapes and two wildcards are InvalidArgument', () => {
    const arr = NDArray.from([1, 2, 3, 4]);
    expect(() => arr.reshape([3])).toThrow(InvalidArgument);
    expect(() => arr.reshape([3])).toThrow('cannot reshape array of size 4 into shape (3,)');
    expect(() => arr.reshape([-1, -1])).toThrow(InvalidArgument);
  });
  it('the constructor checks size against shape', () => {
    expect(() => new NDArray(new Float64Array(3), [2, 2])).toThrow(InvalidArgument);
  });
});

describe('astype (docs/spec/io-descriptors.md §2.3/2.4 casting)', () => {
  it('numbers → str with the reference text form, float32 in its own precision', () => {
    expect(NDArray.from([2, 4]).astype('str').toArray()).toEqual(['2', '4']);
    expect(NDArray.from([0.1, 1]).astype('float32').astype('str').toArray()).toEqual(['0.1', '1.0']);
    expect(NDArray.from([true]).astype('str').toArray()).toEqual(['True']);
  });
  it('float64 → float32 rounds to nearest float32', () => {
    expect(NDArray.from([0.1]).astype('float32').data[0]).toBe(Math.fround(0.1));
  });
  it('narrowing integers wraps modulo 2^bits', () => {
    expect(NDArray.from([300, -1]).astype('int8').toArray()).toEqual([44, -1]);
    expect(NDArray.from([-1]).astype('uint64').toArray()).toEqual([18446744073709551615n]);
    expect(
      NDArray.from([2 ** 40 + 5], 'int64')
        .astype('int32')
        .toArray(),
    ).toEqual([5]);
  });
  it('float → int truncates; bool → 0/1; int → float', () => {
    expect(NDArray.from([1.9, -1.9]).astype('int16').toArray()).toEqual([1, -1]);
    expect(NDArray.from([true, false]).astype('float32').toArray()).toEqual([1, 0]);
    expect(NDArray.from([9007199254740993n], 'int64').astype('float64').toArray()).toEqual([
      9007199254740992,
    ]);
    expect(NDArray.from([0, 2]).astype('bool').toArray()).toEqual([false, true]);
  });
  it('str → number parses, failure is a BadInput', () => {
    expect(NDArray.from(['7', '8']).astype('int32').toArray()).toEqual([7, 8]);
    expect(() => NDArray.from(['x']).astype('int32')).toThrow(DTypeConversionError);
  });
  it('astype copies', () => {
    const arr = NDArray.from([1, 2], 'int32');
    expect(arr.astype('int32').data).not.toBe(arr.data);
  });
});

describe('same-kind cast table (docs/spec/io-descriptors.md §2.4)', () => {
  const yes: Array<[DType, DType]> = [
    ['bool', 'int8'],
    ['bool', 'float32'],
    ['int64', 'int8'],
    ['uint8', 'int16'],
    ['uint64', 'uint8'],
    ['int32', 'float64'],
    ['float64', 'float16'],
    ['float32', 'str'],
    ['str', 'object'],
    ['object', 'object'],
  ];
  const no: Array<[DType, DType]> = [
    ['int8', 'bool'],
    ['int8', 'uint8'],
    ['float32', 'int64'],
    ['str', 'uint8'],
    ['str', 'float64'],
    ['object', 'str'],
    ['object', 'int64'],
  ];
  it.each(yes)('%s → %s allowed', (a, b) => expect(canCastSameKind(a, b)).toBe(true));
  it.each(no)('%s → %s refused', (a, b) => expect(canCastSameKind(a, b)).toBe(false));
});

describe('text forms (PYFLOAT)', () => {
  it.each([
    [1, '1.0'],
    [2.5, '2.5'],
    [0.1, '0.1'],
    [1e-5, '1e-05'],
    [0.0001, '0.0001'],
    [1e16, '1e+16'],
    [1e15, '1000000000000000.0'],
    [1.2345678901234568e17, '1.2345678901234568e+17'],
    [-0, '-0.0'],
  ])('%s → %s', (x, text) => expect(formatPyFloat(x)).toBe(text));
});

describe('JSON form', () => {
  it('is compact; non-finite → null; float32 widened', () => {
    expect(
      ndarrayToJson(
        NDArray.from([
          [2, 4],
          [6, 8],
        ]),
      ),
    ).toBe('[[2,4],[6,8]]');
    expect(ndarrayToJson(NDArray.from([1.5, Number.NaN, Number.POSITIVE_INFINITY]))).toBe('[1.5,null,null]');
    expect(ndarrayToJson(NDArray.from([0.1, 1, 2], 'float32'))).toBe('[0.10000000149011612,1,2]');
    expect(ndarrayToJson(NDArray.from(['é', 'a"b']))).toBe('["é","a\\"b"]');
    expect(ndarrayToJson(NDArray.from(5))).toBe('5');
    expect(ndarrayToJson(NDArray.from([true, false]))).toBe('[true,false]');
    expect(ndarrayToJson(NDArray.from([null, { a: 1n }]))).toBe('[null,{"a":1}]');
  });
  it('writes every numeric dtype and shape (empty, ragged-free, deep) as its nested list, value by value', () => {
    const floats = [0, -0, 1.5, -2.25, 0.1, 3e38, Number.NaN, Number.POSITIVE_INFINITY, -7, 1e-7];
    const ints = [0, 1, 127, 42, 7, 100];
    const shapes = [[0], [5], [2, 3], [2, 0], [0, 3], [2, 2, 3], [1, 1, 1, 4]];
    for (const dtype of [
      'float32',
      'float64',
      'int8',
      'int16',
      'int32',
      'uint8',
      'uint16',
      'uint32',
    ] as const) {
      for (const shape of shapes) {
        const size = shape.reduce((a, b) => a * b, 1);
        const pick = dtype.startsWith('float') ? floats : ints;
        const arr = NDArray.from(
          Array.from({ length: size }, (_, i) => pick[i % pick.length]!),
          dtype,
        ).reshape(shape);
        // The nested list with each value written as String() writes it (non-finite → null).
        const expected = JSON.stringify(arr.toArray(), (_k, v: unknown) =>
          typeof v === 'number' && !Number.isFinite(v) ? null : v,
        );
        expect(ndarrayToJson(arr), `${dtype} ${JSON.stringify(shape)}`).toBe(expected);
      }
    }
  });
  it('JSON.stringify uses toJSON', () => {
    expect(JSON.stringify(NDArray.from([[1, 2]]))).toBe('[[1,2]]');
  });
  it('errors are TiffinErrors', () => {
    try {
      fromJson('[[1],[2,3]]');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(TiffinError);
      expect((err as TiffinError).httpStatus).toBe(400);
    }
  });
});
