mod bm25;
mod embed;
mod filter;
mod fuse;
mod rank;
mod record;
mod text;
mod static_embed;
