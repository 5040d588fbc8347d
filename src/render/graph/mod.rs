//! The transition graph as a picture: SVG drawn by fsmlog itself on a fixed lifecycle layout,
//! Graphviz DOT, and Mermaid for a pull-request comment. All three draw the same edges with
//! the same labels.

mod dot;
mod layout;
mod mermaid;
mod shape;
mod svg;

pub use dot::dot;
pub use mermaid::mermaid;
pub use svg::svg;
