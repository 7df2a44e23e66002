// @tiffin/io-pandas — implementation in progress.
export {};
