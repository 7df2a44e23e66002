// @tiffin/diffusion — implementation in progress.
export {};
