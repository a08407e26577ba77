//! The episodic log: agent events with a per-agent cap and a TTL.
