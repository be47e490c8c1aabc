//! Which version of an agent runs, read from the package metadata
//! installed beside its program (`package.json`, a Python distribution's
//! `METADATA`); nothing is run. Which files to read, and how, is the
//! detector's pure `version` module; the reading is here.

use std::path::Path;

use tend_detector::manifest::Manifest;
use tend_detector::version::{self, MetadataSource};

use super::{Sampler, CACHE_MAX, LIST_MAX, METADATA_MAX};

impl Sampler {
    /// The version of `manifest`'s agent whose program is at one of
    /// `paths` (a resolved executable or script), from the package
    /// metadata installed beside it; nothing is run. Cached per path.
    pub fn agent_version(&mut self, manifest: &Manifest, paths: &[&str]) -> Option<String> {
        for path in paths {
            if path.is_empty() {
                continue;
            }
            let key = (manifest.id.clone(), (*path).to_owned());
            if let Some(known) = self.versions.get(&key) {
                if known.is_some() {
                    return known.clone();
                }
                continue;
            }
            let found = self.read_version(manifest, path);
            if self.versions.len() >= CACHE_MAX {
                self.versions.clear();
            }
            self.versions.insert(key, found.clone());
            if found.is_some() {
                return found;
            }
        }
        None
    }

    fn read_version(&mut self, manifest: &Manifest, path: &str) -> Option<String> {
        let packages = &manifest.identity.packages;
        for source in version::metadata_sources(path, packages) {
            let found = match source {
                MetadataSource::PackageJson(file) => self
                    .read_text(Path::new(&file))
                    .and_then(|t| version::package_json_version(&t)),
                MetadataSource::SitePackages(dir) => self.dist_version(&dir, packages),
                MetadataSource::PythonLib(lib) => {
                    let entries = self.list_dir(Path::new(&lib));
                    version::site_packages_of(&lib, &entries)
                        .into_iter()
                        .rev()
                        .find_map(|dir| self.dist_version(&dir, packages))
                }
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    fn dist_version(&mut self, site_packages: &str, packages: &[String]) -> Option<String> {
        let entries = self.list_dir(Path::new(site_packages));
        let (dir, named) = version::dist_info_dir(&entries, packages)?;
        let metadata = Path::new(site_packages).join(dir).join("METADATA");
        // The directory name is written by the installer from the same
        // header; the header wins when it can be read.
        Some(
            self.read_text(&metadata)
                .and_then(|t| version::metadata_version(&t))
                .unwrap_or(named),
        )
    }

    /// A small text file, at most [`METADATA_MAX`] bytes.
    fn read_text(&mut self, path: &Path) -> Option<String> {
        self.read_into_buf(path, METADATA_MAX).ok()?;
        Some(String::from_utf8_lossy(&self.buf).into_owned())
    }

    /// A directory's entry names, at most [`LIST_MAX`] of them.
    fn list_dir(&mut self, dir: &Path) -> Vec<String> {
        self.files_read += 1;
        let Ok(rd) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        rd.take(LIST_MAX)
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }
}
