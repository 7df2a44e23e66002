// @tiffin/io-image — implementation in progress.
export {};
