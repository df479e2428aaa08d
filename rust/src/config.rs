//! The settings of one instrumentation (spec/names.yaml `settings`), read by every layer that
//! needs one; the builder (`options.rs`) sets them.

/// The settings of one [`McpOtel`](crate::McpOtel); defaults as every language's (docs/configuration.md).
#[derive(Clone, Debug)]
#[allow(clippy::struct_excessive_bools)] // the settings, each on or off as in every language
pub(crate) struct Config {
    pub(crate) propagate: bool,
    pub(crate) capture_content: bool,
    pub(crate) max_content_length: usize,
    pub(crate) max_name_length: usize,
    pub(crate) max_metric_names: usize,
    pub(crate) server_name: Option<String>,
    pub(crate) server_version: Option<String>,
    pub(crate) trust_remote_context: bool,
    pub(crate) trace_progress_and_logs: bool,
    pub(crate) metrics_resource_uri: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            propagate: true,
            capture_content: false,
            max_content_length: 4096,
            max_name_length: 256,
            max_metric_names: 100,
            server_name: None,
            server_version: None,
            trust_remote_context: true,
            trace_progress_and_logs: false,
            metrics_resource_uri: false,
        }
    }
}
