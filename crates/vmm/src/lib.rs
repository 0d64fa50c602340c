//! The KVM monitor (under construction).
