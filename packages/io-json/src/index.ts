// @tiffin/io-json — implementation in progress.
export {};
