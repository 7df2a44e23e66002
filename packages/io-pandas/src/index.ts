/**
 * @tiffin/io-pandas: PandasDataFrame and PandasSeries descriptors on danfojs-node (JSON in six
 * orients, CSV and Parquet). Importing the package registers both descriptors for `descriptorFromSpec`
 * and JSON encoders for DataFrame/Series; danfojs-node itself is imported on first use.
 */
import { registerDescriptor } from '@tiffin/core';
import { PandasDataFrame } from './descriptors/dataframe.js';
import { PandasSeries } from './descriptors/series.js';
import { registerPandasJsonEncoders } from './json-encoder.js';

registerDescriptor(PandasDataFrame);
registerDescriptor(PandasSeries);
registerPandasJsonEncoders();

export { type DataFrame, loadDanfo, type Series } from './danfo/load.js';
export { PandasDataFrame, type PandasDataFrameOptions } from './descriptors/dataframe.js';
export { PandasSeries, type PandasSeriesOptions } from './descriptors/series.js';
export type { Format } from './formats/format.js';
export type { Dtype } from './table/dtype.js';
export type { DtypeOption } from './table/options.js';
export type { Orient } from './table/orient.js';
