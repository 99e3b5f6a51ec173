"""Remote A2A agents as toolsets: each one tool whose calls are the agent's tasks."""
