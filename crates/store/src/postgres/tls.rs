//! TLS for PostgreSQL connections with rustls (ring for the crypto), keeping libpq's `sslmode`
//! semantics: rustls alone always verifies the chain and the host name, so the weaker modes get a
//! verifier of their own. Handshake signatures are always checked, so the key exchange is bound
//! to the certificate the server sent whatever the mode.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};

/// The CA certificates of a PEM file (`sslrootcert=` / `--pg-ca-file`).
pub(crate) fn read_roots(ca: &Path) -> Result<RootCertStore, String> {
    let pem =
        std::fs::read(ca).map_err(|e| format!("cannot read the CA file {}: {e}", ca.display()))?;
    let not_pem =
        |e: &dyn std::fmt::Display| format!("{} is not a PEM certificate: {e}", ca.display());
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| not_pem(&e))?;
        roots.add(cert).map_err(|e| not_pem(&e))?;
    }
    if roots.is_empty() {
        return Err(not_pem(&"no CERTIFICATE block"));
    }
    Ok(roots)
}

/// The client configuration for one connection: with `roots`, the chain must lead to one of
/// them (and with `check_host_name`, name the host); without, any certificate is accepted
/// (libpq's `prefer` and `require`: encrypted, not authenticated).
pub(crate) fn client_config(
    roots: Option<RootCertStore>,
    check_host_name: bool,
) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = match roots {
        Some(r) => Some(
            WebPkiServerVerifier::builder_with_provider(Arc::new(r), provider.clone())
                .build()
                .map_err(|e| format!("cannot use the CA file: {e}"))?,
        ),
        None => None,
    };
    let verifier = LibpqVerifier {
        chain,
        check_host_name,
        provider: provider.clone(),
    };
    Ok(ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth())
}

/// libpq's certificate checks: none, the chain only, or the chain and the host name.
#[derive(Debug)]
struct LibpqVerifier {
    chain: Option<Arc<WebPkiServerVerifier>>,
    check_host_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for LibpqVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        // webpki checks the chain before the name, so a name error means the chain was good.
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_host_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_that_is_missing_or_not_pem_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let e = read_roots(&missing).unwrap_err();
        assert!(
            e.starts_with("cannot read the CA file") && e.contains("missing.pem"),
            "{e}"
        );
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        let e = read_roots(&junk).unwrap_err();
        assert!(e.contains("junk.pem is not a PEM certificate"), "{e}");
    }
}
