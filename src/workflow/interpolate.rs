//! `${{ name }}` interpolation for kickoff, system prompts, setup commands,
//! agent environments and the context folder.
//!
//! A name that is not known is an error, never left in place: a kickoff that
//! silently contains `${{ dif }}` wastes a whole agent run.

use std::collections::BTreeMap;

/// One `${{ name }}` occurrence in a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The trimmed name between the braces.
    pub name: String,
    /// Byte offset of `${{` in the template.
    pub offset: usize,
}

/// Why a template could not be expanded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InterpolateError {
    #[error("unknown variable '{name}' in ${{{{ {name} }}}}{hint}")]
    Unknown {
        name: String,
        offset: usize,
        hint: String,
    },
    #[error("unclosed '${{{{' (missing '}}}}')")]
    Unclosed { offset: usize },
    #[error("empty ${{{{ }}}}")]
    Empty { offset: usize },
}

impl InterpolateError {
    /// Byte offset in the template where the problem starts.
    pub fn offset(&self) -> usize {
        match self {
            InterpolateError::Unknown { offset, .. }
            | InterpolateError::Unclosed { offset }
            | InterpolateError::Empty { offset } => *offset,
        }
    }
}

/// Lists every `${{ … }}` in `template`, or the first syntax problem.
pub fn references(template: &str) -> Result<Vec<Reference>, InterpolateError> {
    let mut refs = Vec::new();
    let mut from = 0;
    while let Some(found) = template[from..].find("${{") {
        let offset = from + found;
        let inner_start = offset + 3;
        let Some(close) = template[inner_start..].find("}}") else {
            return Err(InterpolateError::Unclosed { offset });
        };
        let name = template[inner_start..inner_start + close].trim();
        if name.is_empty() {
            return Err(InterpolateError::Empty { offset });
        }
        refs.push(Reference {
            name: name.to_string(),
            offset,
        });
        from = inner_start + close + 2;
    }
    Ok(refs)
}

/// The values available to templates: setup outputs, `env.*`, and the
/// reserved `workflow.*` and `context.*` names.
#[derive(Clone, Debug, Default)]
pub struct Vars {
    values: BTreeMap<String, String>,
    /// Whether `env.X` falls back to the process environment.
    process_env: bool,
}

impl Vars {
    /// An empty set that also resolves `env.X` from the process environment.
    pub fn with_process_env() -> Self {
        Vars {
            values: BTreeMap::new(),
            process_env: true,
        }
    }

    /// Sets `name` (a setup output or a reserved name).
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.values.insert(name.into(), value.into());
    }

    /// The value of `name`, if it is known.
    pub fn get(&self, name: &str) -> Option<String> {
        if let Some(v) = self.values.get(name) {
            return Some(v.clone());
        }
        let var = name.strip_prefix("env.")?;
        if self.process_env {
            std::env::var(var).ok()
        } else {
            None
        }
    }

    /// Replaces every `${{ name }}` in `template`; unknown names are errors.
    pub fn expand(&self, template: &str) -> Result<String, InterpolateError> {
        let refs = references(template)?;
        let mut out = String::with_capacity(template.len());
        let mut last = 0;
        for r in refs {
            let Some(value) = self.get(&r.name) else {
                return Err(self.unknown(&r));
            };
            out.push_str(&template[last..r.offset]);
            out.push_str(&value);
            let close = template[r.offset..].find("}}").map(|i| r.offset + i + 2);
            last = close.unwrap_or(template.len());
        }
        out.push_str(&template[last..]);
        Ok(out)
    }

    fn unknown(&self, r: &Reference) -> InterpolateError {
        let hint = if let Some(var) = r.name.strip_prefix("env.") {
            format!(": environment variable {var} is not set")
        } else {
            match super::diagnostic::did_you_mean(&r.name, self.values.keys().map(String::as_str)) {
                Some(s) => format!(" (did you mean '{s}'?)"),
                None => {
                    let known: Vec<&str> = self.values.keys().map(String::as_str).collect();
                    format!(" (known: {}, env.*)", known.join(", "))
                }
            }
        };
        InterpolateError::Unknown {
            name: r.name.clone(),
            offset: r.offset,
            hint,
        }
    }
}

/// Converts a byte offset in a multi-line value into a (line, column) delta
/// from the value's first character, for error positions inside block text.
pub fn line_col_delta(template: &str, offset: usize) -> (u32, u32) {
    let before = &template[..offset.min(template.len())];
    let line = before.matches('\n').count() as u32;
    let col = before.rsplit('\n').next().map_or(0, |s| s.chars().count()) as u32;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Vars {
        let mut v = Vars::default();
        v.set("diff", "+ added line");
        v.set("workflow.name", "review");
        v
    }

    #[test]
    fn expands_known_names_with_or_without_spaces() {
        let out = vars()
            .expand("PR:\n${{ diff }}\n${{workflow.name}} done")
            .unwrap();
        assert_eq!(out, "PR:\n+ added line\nreview done");
    }

    #[test]
    fn unknown_names_are_errors_with_suggestions() {
        let err = vars().expand("x ${{ dif }}").unwrap_err();
        assert_eq!(err.offset(), 2);
        assert!(err.to_string().contains("did you mean 'diff'"), "{err}");
    }

    #[test]
    fn unset_env_is_an_error_naming_the_variable() {
        let err = Vars::with_process_env()
            .expand("${{ env.AWTUI_SURELY_UNSET_VAR }}")
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("AWTUI_SURELY_UNSET_VAR is not set"),
            "{err}"
        );
    }

    #[test]
    fn env_comes_from_the_process() {
        // PATH is set in every test environment.
        let out = Vars::with_process_env().expand("${{ env.PATH }}").unwrap();
        assert_eq!(out, std::env::var("PATH").unwrap());
    }

    #[test]
    fn syntax_problems() {
        assert!(matches!(
            references("a ${{ b"),
            Err(InterpolateError::Unclosed { offset: 2 })
        ));
        assert!(matches!(
            references("${{ }}"),
            Err(InterpolateError::Empty { offset: 0 })
        ));
        assert_eq!(references("no vars, $ { { }}").unwrap(), vec![]);
    }

    #[test]
    fn values_are_not_re_expanded() {
        let mut v = Vars::default();
        v.set("a", "${{ b }}");
        assert_eq!(v.expand("${{ a }}").unwrap(), "${{ b }}");
    }

    #[test]
    fn line_col_delta_counts_chars() {
        assert_eq!(line_col_delta("ab\ncdé ${{ x }}", 8), (1, 4));
    }
}
